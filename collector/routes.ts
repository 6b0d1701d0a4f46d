/**
 * The collector's routes: usage reports in (`POST /report`, `/usage`, `/`: a local service's counters as
 * JSON, or an ISP filtering server's usage form) and the update channel out (`GET /db/manifest`,
 * `GET /db/snapshots/<version>.snap.gz`). Every route checks the caller's key; an unknown key gets 403.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../engine/config/index.js'
import { readManifest } from '../engine/catdb/index.js'
import {
  createHttpServer,
  HttpError,
  roleHttpImpl,
  type HttpRequest,
  type HttpResponse,
  type HttpServer
} from '../engine/http/index.js'
import type { Logger } from '../engine/log/index.js'
import { createHttpMetrics } from '../engine/metrics/index.js'
import { collectorError } from './errors.js'
import type { CounterReport, UsageDb } from './usage-db.js'

/** Largest report body accepted: a full counter array of 65536 numbers fits well within it. */
const BODY_LIMIT_BYTES = 4 * 1024 * 1024

function isCounterArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((n) => Number.isInteger(n) && n >= 0)
}

/** The key if the collector knows it; else the 403 error. */
type KeyCheck = (key: string | undefined | null) => string

function reportHandler(
  checkKey: KeyCheck,
  usage: UsageDb,
  logger: Logger
): (req: HttpRequest, res: HttpResponse) => Promise<void> {
  return async (req, res) => {
    const type = (req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (type === 'application/x-www-form-urlencoded') {
      const form = new URLSearchParams((await req.body()).toString('utf8'))
      const key = checkKey(form.get('key'))
      const count = Number(form.get('count'))
      if (form.get('count') === null || !Number.isSafeInteger(count) || count < 0)
        throw collectorError('COLLECTOR_BAD_COUNT', 'count must be a non-negative integer', 'count')
      await usage.addCount(key, count)
      logger.debug({ key, count }, 'usage form')
      res.send('ok')
      return
    }
    const body = (await req.json()) as Record<string, unknown> | null
    if (body === null || typeof body !== 'object')
      throw collectorError('COLLECTOR_BAD_REPORT', 'expected a JSON object', 'body')
    const key = checkKey(typeof body.key === 'string' ? body.key : undefined)
    for (const field of ['counter_cat', 'counter_unknown_cat']) {
      if (!isCounterArray(body[field]))
        throw collectorError('COLLECTOR_BAD_REPORT', `${field} must be an array of non-negative integers`, field)
    }
    await usage.addCounters(key, body as unknown as CounterReport)
    logger.debug({ key, version: body.version }, 'counters report')
    res.json({ status: 'ok' })
  }
}

/** The role's server with its routes (not listening yet). */
export function createCollectorServer(config: Readonly<Config>, logger: Logger, usage: UsageDb): HttpServer {
  const section = config.collector
  const keys = new Set(section.keys)
  const checkKey: KeyCheck = (key) => {
    if (key === undefined || key === null || key === '' || !keys.has(key))
      throw collectorError('COLLECTOR_UNKNOWN_KEY', 'unknown key')
    return key
  }
  const requestKey = (req: HttpRequest): string => checkKey(req.header('x-filterd-key') ?? req.searchParams.get('key'))
  // One cached file: every local service downloads the same current snapshot.
  let cached: { name: string; bytes: Buffer } | undefined

  const server = createHttpServer({
    logger: {
      warn: (m: string) => {
        logger.warn(m)
      }
    },
    impl: roleHttpImpl(config.common['http-server'], 'known'),
    bodyLimit: BODY_LIMIT_BYTES,
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'request failed')
  })
  // Requests counted and timed by route pattern on GET /metrics (loopback callers only).
  const metrics = createHttpMetrics('collector')
  metrics.mount(server)
  const onReport = reportHandler(checkKey, usage, logger)
  for (const path of ['/report', '/usage', '/']) server.route('POST', path, metrics.wrap(path, onReport))

  server.route(
    'GET',
    '/db/manifest',
    metrics.wrap('/db/manifest', (req, res) => {
      requestKey(req)
      const manifest = readManifest(section.snapshots)
      if (manifest === undefined) throw new HttpError(404, 'HTTP_NOT_FOUND', 'no snapshot published yet')
      res.json(manifest)
    })
  )
  server.route(
    'GET',
    '/db/snapshots/:file',
    metrics.wrap('/db/snapshots/:file', (req, res) => {
      requestKey(req)
      const name = req.params.file ?? ''
      if (!/^\d+\.snap\.gz$/.test(name)) throw new HttpError(404, 'HTTP_NOT_FOUND', 'no such snapshot')
      if (cached?.name !== name) {
        try {
          cached = { name, bytes: readFileSync(join(section.snapshots, name)) }
        } catch (err) {
          if ((err as { code?: string }).code === 'ENOENT')
            throw new HttpError(404, 'HTTP_NOT_FOUND', 'no such snapshot')
          throw err
        }
      }
      res.header('Content-Type', 'application/gzip').send(cached.bytes)
    })
  )
  return server
}
