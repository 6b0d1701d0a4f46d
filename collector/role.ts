/**
 * The `collector` role, the vendor side (docs/collector.md):
 * - `POST /report` (also `/usage` and `/`): a local service's counters as JSON
 *   `{key, counter_cat, counter_unknown_cat}`, or an ISP filtering server's usage form
 *   (`application/x-www-form-urlencoded`, `key`, `count`, answered with the body `ok`);
 *   stored per key per day in `collector.db` (usage-db.ts);
 * - `GET /db/manifest` and `GET /db/snapshots/<version>.snap.gz`: the update channel
 *   (snapshot.ts), the key in the `X-Filterd-Key` header or the `key` query parameter.
 * An unknown key gets 403 everywhere.
 *
 * Publishing: at start, and again on SIGHUP, the collector compiles the config's data files
 * (`datafiles.path` + `datafiles.file`, as `build-db` does) into category tables in its own
 * environment and publishes them as the next snapshot, unless the data files are byte-for-byte
 * the ones the current snapshot was built from.
 */
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { formatHostPort, parseHostPort, type Config } from '../engine/config/index.js'
import { CategoryDb } from '../engine/catdb/index.js'
import { createHttpServer, HttpError, roleHttpImpl, type HttpRequest } from '../engine/http/index.js'
import { createHttpMetrics } from '../engine/metrics/http.js'
import type { Logger } from '../engine/log/index.js'
import type { RoleContext, RunningRole } from '../engine/role.js'
import { Store } from '../engine/store/index.js'
import { buildCategoryDb } from '../engine/catdb/build.js'
import { collectorError } from './errors.js'
import { publishSnapshot, readManifest, type SnapshotManifest } from '../engine/catdb/snapshot.js'
import { UsageDb, type CounterReport } from './usage-db.js'

/** Largest report body accepted: a full counter array of 65536 numbers fits well within it. */
const kBodyLimit = 4 * 1024 * 1024

/** Digest of the data files' names and bytes, in their layer order; undefined when none exists. */
async function dataDigest (config: Readonly<Config>): Promise<string | undefined> {
  const hash = createHash('sha256')
  let found = 0
  for (const f of config.datafiles.file) {
    const path = join(config.datafiles.path, f)
    hash.update(`${f}\0`)
    if (!existsSync(path)) continue
    found++
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
    hash.update('\0')
  }
  return found === 0 ? undefined : hash.digest('hex')
}

/** Compiles the data files and publishes them as a new snapshot when they changed. */
export async function publishFromDatafiles (config: Readonly<Config>, store: Store, logger: Logger): Promise<SnapshotManifest | undefined> {
  const dir = config.collector.snapshots
  const digest = await dataDigest(config)
  if (digest === undefined) {
    logger.warn({ path: config.datafiles.path, files: config.datafiles.file }, 'no data file found; nothing to publish')
    return undefined
  }
  const current = readManifest(dir)
  if (current?.source === digest) {
    logger.info({ version: current.version }, 'data files unchanged; snapshot already published')
    return current
  }
  const result = await buildCategoryDb(config, store, { log: (line) => logger.info(line) })
  if (!result.committed) {
    logger.error({ errors: result.errors }, 'data files have malformed lines; snapshot not published')
    return undefined
  }
  const manifest = await publishSnapshot(dir, new CategoryDb(store).entries(), digest)
  logger.info({ version: manifest.version, entries: manifest.entries, size: manifest.size, sha256: manifest.sha256 }, 'snapshot published')
  return manifest
}

function isCounterArray (v: unknown): v is number[] {
  return Array.isArray(v) && v.every((n) => Number.isInteger(n) && n >= 0)
}

export async function startRole (ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  const section = config.collector
  const keys = new Set(section.keys)
  const store = Store.open(section.db)
  const usage = new UsageDb(store.root)

  let publishing: Promise<unknown> = Promise.resolve()
  const publish = (): Promise<unknown> => {
    publishing = publishing.then(() => publishFromDatafiles(config, store, logger)).catch((err: unknown) => {
      logger.error({ err }, 'publishing a snapshot failed')
    })
    return publishing
  }
  await publish()
  const onHup = (): void => { void publish() }
  process.on('SIGHUP', onHup)

  const checkKey = (key: string | undefined | null): string => {
    if (key === undefined || key === null || key === '' || !keys.has(key)) throw collectorError('COLLECTOR_UNKNOWN_KEY', 'unknown key')
    return key
  }
  const requestKey = (req: HttpRequest): string => checkKey(req.header('x-filterd-key') ?? req.searchParams.get('key'))

  // One cached file: every local service downloads the same current snapshot.
  let cached: { name: string, bytes: Buffer } | undefined

  const server = createHttpServer({
    logger: { warn: (m: string) => { logger.warn(m) } },
    impl: roleHttpImpl(config.common['http-server'], 'known'),
    bodyLimit: kBodyLimit,
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'request failed')
  })

  const onReport = async (req: HttpRequest, res: Parameters<Parameters<typeof server.route>[2]>[1]): Promise<void> => {
    const type = (req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (type === 'application/x-www-form-urlencoded') {
      const form = new URLSearchParams((await req.body()).toString('utf8'))
      const key = checkKey(form.get('key'))
      const count = Number(form.get('count'))
      if (form.get('count') === null || !Number.isSafeInteger(count) || count < 0) throw collectorError('COLLECTOR_BAD_COUNT', 'count must be a non-negative integer', 'count')
      await usage.addCount(key, count)
      logger.debug({ key, count }, 'usage form')
      res.send('ok')
      return
    }
    const body = await req.json() as Record<string, unknown> | null
    if (body === null || typeof body !== 'object') throw collectorError('COLLECTOR_BAD_REPORT', 'expected a JSON object', 'body')
    const key = checkKey(typeof body.key === 'string' ? body.key : undefined)
    for (const field of ['counter_cat', 'counter_unknown_cat']) {
      if (!isCounterArray(body[field])) throw collectorError('COLLECTOR_BAD_REPORT', `${field} must be an array of non-negative integers`, field)
    }
    await usage.addCounters(key, body as unknown as CounterReport)
    logger.debug({ key, version: body.version }, 'counters report')
    res.json({ status: 'ok' })
  }
  // Requests counted and timed by route pattern on GET /metrics (loopback callers only).
  const metrics = createHttpMetrics('collector')
  metrics.mount(server)
  for (const path of ['/report', '/usage', '/']) server.route('POST', path, metrics.wrap(path, onReport))

  server.route('GET', '/db/manifest', metrics.wrap('/db/manifest', (req, res) => {
    requestKey(req)
    const manifest = readManifest(section.snapshots)
    if (manifest === undefined) throw new HttpError(404, 'HTTP_NOT_FOUND', 'no snapshot published yet')
    res.json(manifest)
  }))
  server.route('GET', '/db/snapshots/:file', metrics.wrap('/db/snapshots/:file', (req, res) => {
    requestKey(req)
    const name = req.params.file ?? ''
    if (!/^\d+\.snap\.gz$/.test(name)) throw new HttpError(404, 'HTTP_NOT_FOUND', 'no such snapshot')
    if (cached?.name !== name) {
      try {
        cached = { name, bytes: readFileSync(join(section.snapshots, name)) }
      } catch (err) {
        if ((err as { code?: string }).code === 'ENOENT') throw new HttpError(404, 'HTTP_NOT_FOUND', 'no such snapshot')
        throw err
      }
    }
    res.header('Content-Type', 'application/gzip').send(cached.bytes)
  }))

  const listen = parseHostPort(section.listen)
  const bound = await server.listen(listen.host, listen.port)
  return {
    endpoints: [`collector http ${formatHostPort({ ...listen, port: bound.port })}`],
    async close () {
      process.off('SIGHUP', onHup)
      await server.close()
      await publishing
      await store.close()
    }
  }
}

