/**
 * Who may call the management API, checked by the api role itself on every request (so a connection
 * straight to `api.listen` is held to the same rule as one through the front door), after the front
 * door's `api.access` address rules (blockpage/front-door.ts), which run first for every request
 * from outside.
 *
 * The caller's address. The front door relays requests from loopback, so the socket peer alone
 * would make every outside caller look local. A request from a loopback peer is therefore judged
 * by the address it was relayed for: `X-Filterd-Client`, which the front door always writes (it
 * overwrites whatever the client sent) with the address its rules judged; failing that, the
 * rightmost `X-Forwarded-For` entry (another proxy on this host relayed it: the address that proxy
 * saw). Neither header is believed from any other peer. A local program can write any address
 * there, but it could call the API as itself anyway: the headers can take loopback's exemption
 * away, never give it to someone else. A relay on this host that writes neither header is the one
 * case this cannot see; docs/api.md says to set `api.loopback-without-credentials: false` then.
 *
 * The rule, in order:
 *   1. an `Authorization` header is always checked (Bearer `<id>.<secret>` or Basic `id:secret`
 *      of a client made by `filterd api-client add`): wrong → 401, too many wrong from one
 *      address → 429 with Retry-After (engine/auth: scrypt, cached, equal work for unknown ids);
 *   2. none, from a loopback address, with `api.loopback-without-credentials` (default): let in;
 *   3. none, with `api.require-credentials: false`: let in (the address rules alone decided);
 *   4. otherwise 401 with a `WWW-Authenticate` challenge for each scheme, so a browser opening
 *      the console (/ui/) asks for a user name (the client id) and password (the secret).
 *
 * Every request with a write method (PUT, POST, DELETE, PATCH) leaves one audit line in the log
 * once it is answered: `{"audit":"api", who, source, method, path, status}` plus the line's `time`;
 * `who` is the client id, `loopback`, `address-rule`, or `-` when it was refused.
 */
import { Authenticator, parseBasicOrBearer, retryAfterSeconds, type AuthOutcome } from '../engine/auth/index.js'
import { errorBody, isHttpError, type Handler, type HttpRequest, type HttpResponse } from '../engine/http/index.js'
import { auditLogger, type Logger } from '../engine/log/index.js'
import { RELAYED_CLIENT_HEADER } from '../engine/net/access.js'
import { isLoopbackAddress, normalizeIp } from '../engine/net/ip.js'
import { GenerationWatcher, type Store } from '../engine/store/index.js'
import { API_ERRORS } from './errors.js'

export const REALM = 'filterd management API'
const CHALLENGES = [`Bearer realm="${REALM}"`, `Basic realm="${REALM}", charset="UTF-8"`] as const

const WRITE_METHODS: ReadonlySet<string> = new Set(['PUT', 'POST', 'DELETE', 'PATCH'])

/** A peer address as the adapter gives it (canonical: dotted quad, compressed IPv6) on loopback; no parsing. */
function isLoopbackPeer (peer: string): boolean {
  return peer.startsWith('127.') || peer === '::1'
}

/** The address a request is judged by (see the module comment). */
export function sourceAddress (req: HttpRequest): string {
  const peer = req.remoteAddress
  if (!isLoopbackPeer(peer)) return peer
  const relayed = req.header(RELAYED_CLIENT_HEADER)
  if (relayed !== undefined) {
    const text = relayed.trim()
    return normalizeIp(text) ?? text
  }
  const xff = req.header('x-forwarded-for')
  if (xff !== undefined) {
    const last = xff.slice(xff.lastIndexOf(',') + 1).trim()
    return normalizeIp(last) ?? last
  }
  return peer
}

export interface ApiGuardOptions {
  readonly store: Store
  readonly config: { readonly 'require-credentials': boolean, readonly 'loopback-without-credentials': boolean }
  readonly logger: Logger
  /** Failed verifications allowed per address per minute before 429 (default 10). */
  readonly failureLimit?: number
  readonly now?: () => number
}

export interface ApiGuard {
  /** The handler behind the rule above, with the audit line for writes. */
  wrap (handler: Handler): Handler
  close (): void
}

/** What an audit line names: the request, read before the handler runs (uWS: the request dies with its callback). */
interface Write { readonly method: string, readonly path: string, readonly source: string }

function refuse (res: HttpResponse, outcome: Exclude<AuthOutcome, { ok: true }> | { ok: false, reason: 'required' }): void {
  if (outcome.reason === 'throttled') {
    res.status(API_ERRORS.API_AUTH_THROTTLED).header('Retry-After', String(retryAfterSeconds(outcome.retryAfterMs)))
      .header('Content-Type', 'application/json')
      .send(errorBody('API_AUTH_THROTTLED', 'too many failed authentications from this address; retry later'))
    return
  }
  res.status(API_ERRORS.API_UNAUTHORIZED)
  for (const c of CHALLENGES) res.header('WWW-Authenticate', c)
  res.header('Content-Type', 'application/json').send(errorBody('API_UNAUTHORIZED', outcome.reason === 'invalid'
    ? 'wrong API client credentials'
    : 'credentials are required: Authorization: Bearer <token> or HTTP Basic with an API client (filterd api-client add)'))
}

export function createApiGuard (options: ApiGuardOptions): ApiGuard {
  const { store, logger } = options
  const now = options.now ?? Date.now
  const required = options.config['require-credentials']
  const loopbackFree = options.config['loopback-without-credentials']
  const auth = new Authenticator(store, {
    lookup: (id) => store.getApiClient(id),
    parse: parseBasicOrBearer,
    ...(options.failureLimit === undefined ? {} : { failureLimit: options.failureLimit })
  })
  // `filterd api-client remove` in another process bumps the generation: drop the cached verifications.
  const watcher = new GenerationWatcher(store, (g) => { auth.sync(g) })
  const sweep = setInterval(() => { auth.failures.sweep(now()) }, 10_000)
  sweep.unref()

  // Written whatever api.log-level says (engine/log, auditLogger).
  const auditLog = auditLogger(logger)
  const audit = (w: Write, who: string, status: number): void => {
    auditLog.info({ audit: 'api', who, source: w.source, method: w.method, path: w.path, status }, 'management API write')
  }

  /** Runs the handler; for a write, logs the audit line once the answer (or the error that becomes it) is known. */
  const run = (handler: Handler, req: HttpRequest, res: HttpResponse, who: string, w: Write | undefined): void | Promise<void> => {
    if (w === undefined) return handler(req, res)
    const done = (): void => { audit(w, who, res.sent ? res.statusCode : 500) }
    const failed = (err: unknown): never => {
      audit(w, who, isHttpError(err) ? err.status : 500)
      throw err
    }
    let result: void | Promise<void>
    try {
      result = handler(req, res)
    } catch (err) {
      return failed(err)
    }
    if (result instanceof Promise) return result.then(done, failed)
    done()
  }

  return {
    wrap (handler) {
      return (req, res) => {
        watcher.poll()
        const header = req.header('authorization')
        const isWrite = WRITE_METHODS.has(req.method)
        // A read with credentials verified before needs nothing else: neither the caller's address nor an audit line.
        if (!isWrite && header !== undefined && header !== '') {
          const known = auth.cached(header)
          if (known !== undefined) return handler(req, res)
        }
        const source = sourceAddress(req)
        const w: Write | undefined = isWrite
          ? { method: req.method, path: req.query === '' ? req.path : `${req.path}?${req.query}`, source }
          : undefined
        if (header === undefined || header === '') {
          let who: string | undefined
          if (loopbackFree && isLoopbackAddress(source)) who = 'loopback'
          else if (!required) who = 'address-rule'
          if (who !== undefined) return run(handler, req, res, who, w)
          refuse(res, { ok: false, reason: 'required' })
          if (w !== undefined) audit(w, '-', res.statusCode)
          return
        }
        const known = auth.cached(header)
        if (known !== undefined) return run(handler, req, res, known, w)
        return auth.authenticate(header, source, now()).then((outcome) => {
          if (outcome.ok) return run(handler, req, res, outcome.clientId, w)
          refuse(res, outcome)
          if (w !== undefined) audit(w, '-', res.statusCode)
        })
      }
    },
    close () {
      clearInterval(sweep)
    }
  }
}
