/**
 * The project's one HTTP adapter, used by every HTTP role (management API, block page, categorization API,
 * local service, collector). uWebSockets.js serves when its native addon loads; otherwise `node:http` takes
 * over with a single warning. Both implementations share the router, request/response objects and error
 * mapping, and pass the same conformance suite (`http.case.ts`).
 *
 * @example
 * ```ts
 * const server = createHttpServer({ bodyLimit: 64 * 1024 })
 * server.route('GET', '/users/:id', (req, res) => { res.json({ id: req.params.id }) })
 * server.route('POST', '/users', async (req, res) => { res.json(await req.json(), 201) })
 * const { port } = await server.listen('127.0.0.1', 0)
 * await server.close()
 * ```
 */
import { type Handler, type MethodNotAllowedHandler, type ErrorHook } from './core.js'
import { NodeServer } from './node.js'
import { Router } from './router.js'
import { UwsServer, loadUwsNative, type UwsModule } from './uws.js'

export {
  HttpError,
  errorBody,
  isHttpError,
  FRONT_DOOR_ERRORS,
  type HttpErrorOptions,
  type HttpAdapterErrorCode,
  type FrontDoorErrorCode
} from './errors.js'
export type { HttpRequest, HttpResponse, HttpStream, Handler, MethodNotAllowedHandler, ErrorHook } from './core.js'
export type { UwsModule } from './uws.js'
export { findDuplicateKey } from './json-keys.js'

export type HttpImpl = 'uws' | 'node'

/** Where the adapter reports that it fell back to node:http. */
export interface HttpLogger {
  warn(message: string): void
}

export interface HttpServerOptions {
  /**
   * `'auto'` (default) uses uWS when its addon loads, else node:http with one warning; `'uws'` too (its addon
   * has builds for Node 16, 18 and 20 only); `'node'` always node:http.
   */
  impl?: 'auto' | HttpImpl
  /** Largest request body accepted, in bytes (default 1 MiB); larger bodies get 413 and are not buffered. */
  bodyLimit?: number
  /** PEM file paths; serves HTTPS (uWS `SSLApp` / `node:https`). */
  tls?: { cert: string; key: string }
  /** Called once for every non-HttpError a handler throws (the client gets a 500 `HTTP_INTERNAL`). */
  onError?: ErrorHook
  /** Answers requests no route matches (default: 404 JSON `HTTP_NOT_FOUND`). */
  notFound?: Handler
  /**
   * Answers requests whose path matches but method does not (default: 405 JSON `HTTP_METHOD_NOT_ALLOWED`
   * with `Allow`). `allowed` is sorted and includes HEAD where GET exists; set `Allow` yourself here.
   */
  methodNotAllowed?: MethodNotAllowedHandler
  /** Receives the fallback warning (default: `process.emitWarning`, i.e. stderr). */
  logger?: HttpLogger
  /** Loads uWS or throws; injectable so tests can simulate a missing addon. Outcomes are cached per loader. */
  loadUws?: () => UwsModule
}

export interface HttpServer {
  /** Which implementation serves. */
  readonly impl: HttpImpl
  /**
   * Registers a handler. Patterns: exact paths (`/config/` and `/config` differ), `:name` segments, and a
   * final `*` capturing the rest (`/url/*` → `rawParams['*']`). `'*'` as method answers any method.
   */
  route(method: string | readonly string[], pattern: string, handler: Handler): this
  /** Starts listening; `host` may be IPv4, IPv6 (`'::1'`), `'0.0.0.0'` or `'::'`; port 0 picks a free port. */
  listen(host: string, port: number): Promise<{ port: number }>
  /** Stops listening and closes every open connection, keep-alive ones included. */
  close(): Promise<void>
}

/** The values of `common.http-server`. */
export type HttpServerSetting = 'auto' | HttpImpl

/**
 * Who talks to a role over HTTP, which decides what `common.http-server: auto` means for it:
 * - `'public'`: reverse proxies, health checks, browsers and billing scripts, which may speak HTTP/1.0, leave
 *   out Host or send an absolute-form target. uWS 20.30 leaves those unanswered (uws.ts), so node:http serves.
 * - `'known'`: clients filterd controls or documents (the containers, the categorization API's programs), all
 *   HTTP/1.1 with Host, and throughput is the job: uWS when its addon loads, else node:http.
 */
export type HttpAudience = 'public' | 'known'

/** The implementation a role asks `createHttpServer` for under a `common.http-server` setting. */
export function roleHttpImpl(setting: HttpServerSetting, audience: HttpAudience): 'auto' | HttpImpl {
  if (setting !== 'auto') return setting
  return audience === 'public' ? 'node' : 'auto'
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024

type LoadOutcome = { ok: true; uws: UwsModule } | { ok: false; error: unknown }
// One load attempt (and so one warning) per loader for the whole process, however many roles start servers.
const outcomes = new WeakMap<() => UwsModule, LoadOutcome>()

function load(loader: () => UwsModule): LoadOutcome {
  let outcome = outcomes.get(loader)
  if (outcome === undefined) {
    try {
      outcome = { ok: true, uws: loader() }
    } catch (error) {
      outcome = { ok: false, error }
    }
    outcomes.set(loader, outcome)
  }
  return outcome
}

/** Why the uWS addon does not load in this process (undefined when it does); the outcome is cached. */
export function uwsLoadError(): string | undefined {
  const outcome = load(loadUwsNative)
  if (outcome.ok) return undefined
  return outcome.error instanceof Error ? outcome.error.message : String(outcome.error)
}

// One JSON line on stderr, shaped like the roles' log lines, for callers that pass no logger.
const defaultLogger: HttpLogger = {
  warn(message) {
    process.stderr.write(
      JSON.stringify({
        level: 40,
        time: new Date().toISOString(),
        pid: process.pid,
        code: 'HTTP_UWS_FALLBACK',
        msg: message
      }) + '\n'
    )
  }
}

/**
 * Creates an HTTP server; routes may be added before or after `listen`.
 * When uWS is asked for (`'auto'` or `'uws'`) and its addon does not load, node:http serves, with one warning.
 */
export function createHttpServer(options: HttpServerOptions = {}): HttpServer {
  const router = new Router<Handler>()
  const cfg = {
    router,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    notFound: options.notFound,
    methodNotAllowed: options.methodNotAllowed,
    onError: options.onError,
    tls: options.tls
  }
  const wanted = options.impl ?? 'auto'
  let impl: UwsServer | NodeServer
  if (wanted === 'node') {
    impl = new NodeServer(cfg)
  } else {
    const loader = options.loadUws ?? loadUwsNative
    const isFirst = !outcomes.has(loader)
    const outcome = load(loader)
    if (outcome.ok) {
      impl = new UwsServer(outcome.uws, cfg)
    } else {
      // A forced `uws` falls back as `auto` does: a role that serves beats one that refuses to start
      // on a Node with no uWS build (22, 24), and node:http answers everything uWS would.
      if (isFirst) {
        const reason = outcome.error instanceof Error ? outcome.error.message : String(outcome.error)
        ;(options.logger ?? defaultLogger).warn(
          `uWebSockets.js did not load (${reason}); serving HTTP with node:http${wanted === 'uws' ? ' although common.http-server is uws' : ''}`
        )
      }
      impl = new NodeServer(cfg)
    }
  }
  const server: HttpServer = {
    impl: impl.impl,
    route(method, pattern, handler) {
      router.add(method, pattern, handler)
      return this
    },
    listen: (host, port) => impl.listen(host, port),
    close: () => impl.close()
  }
  return server
}
