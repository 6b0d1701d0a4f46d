/**
 * Request counters and latency histograms of an HTTP role (block page, categorization API), by
 * route pattern, method and status, served at its own `GET /metrics` to loopback callers only (the
 * block page answers every host name, so `/metrics` on a blocked site must stay the block page for
 * subscribers; catapi's clients are outsiders). Scrape it from the host itself or through a local
 * agent. Labels never hold a pid or a client-controlled value beyond the fixed route patterns.
 *
 *   filterd_<role>_http_requests_total{route,method,status}
 *   filterd_<role>_http_request_duration_seconds{route,method,le}
 *   filterd_<role>_process_* (prom-client's default process metrics)
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { HttpError, type Handler, type HttpRequest, type HttpResponse, type HttpServer } from '../http/index.js'

export const HTTP_LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const

export interface HttpMetrics {
  readonly registry: Registry
  /** `handler`, counted and timed under `route` (the pattern, never the requested path). */
  wrap(route: string, handler: Handler): Handler
  /** Mounts `GET /metrics` (loopback callers only; others get `fallback`, or 404) on `server`. */
  mount(server: HttpServer, fallback?: Handler): void
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])

export function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.')
}

/** Called once per request when its answer starts: `started` is process.hrtime.bigint() at arrival. */
type ObserveRequest = (route: string, method: string, status: number, started: bigint) => void

/** `handler`, reporting each request's route, method, status and duration to `observe` once. */
function instrumented(route: string, handler: Handler, observe: ObserveRequest): Handler {
  return (req: HttpRequest, res: HttpResponse) => {
    const started = process.hrtime.bigint()
    const method = METHODS.has(req.method) ? req.method : 'other'
    let status = 200
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      observe(route, method, status, started)
    }
    const r = res as { -readonly [K in keyof HttpResponse]: HttpResponse[K] }
    const origStatus = res.status.bind(res)
    const origSend = res.send.bind(res)
    const origJson = res.json.bind(res)
    const origStream = res.stream.bind(res)
    r.status = (code: number) => {
      status = code
      origStatus(code)
      return res
    }
    r.send = (body?: string | Buffer) => {
      finish()
      origSend(body)
    }
    r.json = (value: unknown, code?: number) => {
      if (code !== undefined) status = code
      finish()
      origJson(value, code)
    }
    r.stream = (first: string) => {
      finish()
      return origStream(first)
    }
    // A handler that throws is answered by the adapter's error path, which does not go through
    // the methods above: count it under the status that error gets (HttpError's, or 500).
    const failed = (err: unknown): never => {
      status = err instanceof HttpError ? err.status : 500
      finish()
      throw err
    }
    try {
      const result = handler(req, res)
      return result instanceof Promise ? result.catch(failed) : result
    } catch (err) {
      return failed(err)
    }
  }
}

export function createHttpMetrics(role: string): HttpMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: `filterd_${role}_` })
  const requests = new Counter({
    name: `filterd_${role}_http_requests_total`,
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry]
  })
  const duration = new Histogram({
    name: `filterd_${role}_http_request_duration_seconds`,
    help: 'time from request to answer, by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: [...HTTP_LATENCY_BUCKETS_S],
    registers: [registry]
  })
  const observe: ObserveRequest = (route, method, status, started) => {
    requests.inc({ route, method, status: String(status) })
    duration.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9)
  }
  const wrap = (route: string, handler: Handler): Handler => instrumented(route, handler, observe)

  return {
    registry,
    wrap,
    mount(server, fallback) {
      server.route('GET', '/metrics', async (req, res) => {
        if (!isLoopback(req.remoteAddress)) {
          if (fallback !== undefined) return fallback(req, res)
          res.json({ error: { code: 'HTTP_NOT_FOUND', message: 'not found' } }, 404)
          return
        }
        res.header('Content-Type', registry.contentType).send(await registry.metrics())
      })
    }
  }
}
