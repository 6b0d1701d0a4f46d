/**
 * The local service's HTTP face: `GET /<domain_name>` (the lookup), `GET /stat/` (the counters), 405 for any
 * other method, and the routes' metrics. The lookup path is synchronous: normalise, a suffix walk in the
 * memory-mapped LMDB tables, a Float64Array increment, and a verdict body cached per distinct category list.
 */
import type { Taxonomy } from '../engine/categories/index.js'
import type { CategoryDb } from '../engine/catdb/index.js'
import type { Config } from '../engine/config/index.js'
import {
  createHttpServer,
  roleHttpImpl,
  type Handler,
  type HttpResponse,
  type HttpServer
} from '../engine/http/index.js'
import { registerHealthRoute, type HealthReport } from '../engine/health/index.js'
import type { Logger } from '../engine/log/index.js'
import { createHttpMetrics } from '../engine/metrics/index.js'
import { normalizeDomain } from '../engine/names/index.js'
import { verdictOf } from '../engine/verdict/index.js'
import type { LookupCounters } from './counters.js'

const BILLING_FAILURE = JSON.stringify({ details: 'billing failure' })
const METHOD_NOT_ALLOWED =
  '<!DOCTYPE html>\n<html><head><title>405 Method Not Allowed</title></head>' +
  '<body><h1>405 Method Not Allowed</h1><p>Only GET is supported.</p></body></html>\n'

function notAllowed(res: HttpResponse): void {
  res.status(405).header('Allow', 'GET').header('Content-Type', 'text/html').send(METHOD_NOT_ALLOWED)
}

export interface LookupDeps {
  readonly catdb: CategoryDb
  readonly taxonomy: Taxonomy
  readonly counters: LookupCounters
  /** False while the last contact with the statistics server failed: lookups answer 503. */
  readonly billingOk: () => boolean
  /** The role's /health report, answered to loopback callers (the container's health check, `filterd status`). */
  readonly health?: () => HealthReport
}

/** `GET /<domain_name>`: 200 with the verdict, 404 (no body) when not categorized, 503 on a billing failure. */
export function createLookupHandler({ catdb, taxonomy, counters, billingOk }: LookupDeps): Handler {
  // Verdict bodies per distinct category list: a handful of strings, built once each.
  const bodies = new Map<string, string>()
  const bodyFor = (cats: readonly number[]): string => {
    const k = cats.join(',')
    let body = bodies.get(k)
    if (body === undefined) {
      body = JSON.stringify(verdictOf(cats, taxonomy))
      bodies.set(k, body)
    }
    return body
  }
  return (req, res) => {
    if (req.method !== 'GET') {
      notAllowed(res)
      return
    }
    if (!billingOk()) {
      res.status(503).header('Content-Type', 'application/json').send(BILLING_FAILURE)
      return
    }
    const raw = req.rawParams['*'] ?? ''
    let text = raw
    if (raw.includes('%')) {
      try {
        text = decodeURIComponent(raw)
      } catch {
        text = ''
      }
    }
    const name = text.includes('/') ? undefined : normalizeDomain(text)
    if (name === undefined) {
      res.status(404).send()
      return
    }
    const site = catdb.categorize(name)
    if (site === undefined) {
      counters.countUnknown()
      res.status(404).send()
      return
    }
    counters.countCategories(site.categories)
    res.header('Content-Type', 'application/json').send(bodyFor(site.categories))
  }
}

/** The role's server with its routes (not listening yet). */
export function createLocalServer(config: Config, logger: Logger, deps: LookupDeps): HttpServer {
  const server = createHttpServer({
    logger: {
      warn: (m: string) => {
        logger.warn(m)
      }
    },
    impl: roleHttpImpl(config.common['http-server'], 'public'),
    bodyLimit: 64 * 1024,
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'request failed'),
    methodNotAllowed: (_req, res) => {
      notAllowed(res)
    }
  })
  // Requests counted and timed by route pattern on GET /metrics (loopback callers; for others
  // "/metrics" is a name like any other and goes to the lookup).
  const metrics = createHttpMetrics('local')
  const counted = metrics.wrap('/*', createLookupHandler(deps))
  metrics.mount(server, counted)
  server.route(
    'GET',
    '/stat/',
    metrics.wrap('/stat/', (req, res) => {
      if (req.method !== 'GET') {
        notAllowed(res)
        return
      }
      res.json(deps.counters.snapshot())
    })
  )
  // /health for callers in the container; for others a name like any other.
  if (deps.health !== undefined) registerHealthRoute(server, deps.health, { loopbackOnly: true, fallback: counted })
  server.route('*', '/*', counted)
  return server
}
