/**
 * Who may call the management API, checked by the api role itself on every request (so a connection
 * straight to `api.listen` is held to the same rule as one through the front door), after the front
 * door's `api.access` address rules (blockpage/front-door.ts), which run first for every request
 * from outside.
 *
 * The caller's address (engine/net/client-address.ts, the front door's rule with loopback as the trusted
 * proxy). The front door relays requests from loopback, so the socket peer alone would make every outside
 * caller look local. A request from a loopback peer is therefore judged by the address it was relayed for:
 * `X-Filterd-Client`, which the front door always writes (it overwrites whatever the client sent) with the
 * address its rules judged; failing that, `X-Forwarded-For` read from the right, skipping loopback hops
 * (another proxy on this host relayed it: the address that proxy saw). Neither header is believed from any
 * other peer. A local program can write any address there, but it could call the API as itself anyway: the
 * headers can take loopback's exemption away, never give it to someone else. A relay on this host that
 * writes neither header is the one case this cannot see; docs/api.md says to set
 * `api.loopback-without-credentials: false` then.
 *
 * The rule, in order:
 *   0. the browser checks (browser-guard.ts): a cross-site request → 403, a write that is not JSON → 415;
 *   1. an `Authorization` header is always checked (Bearer `<id>.<secret>` or Basic `id:secret`
 *      of a client made by `filterd api-client add`): wrong → 401, too many wrong from one
 *      address → 429 with Retry-After (engine/auth: scrypt, cached, equal work for unknown ids);
 *   2. none, from a loopback address, with `api.loopback-without-credentials` (default): let in, when the
 *      `Host` is one the API answers to (else 421: DNS rebinding);
 *   3. none, with `api.require-credentials: false`: let in (the address rules alone decided);
 *   3a. none, `GET /health` from a loopback address (whatever `api.loopback-without-credentials` says,
 *      `Host` checked as in 2): let in, so the local supervisor (`filterd status`, systemd, a check on
 *      this host) reads the role's health without holding API credentials. It says whether the role
 *      serves; nothing on it changes anything or names a user. Every other path keeps rule 4;
 *   4. otherwise 401 with a `WWW-Authenticate` challenge for each scheme, so a browser opening
 *      the console (/ui/) asks for a user name (the client id) and password (the secret).
 *
 * Every request with a write method (PUT, POST, DELETE, PATCH) leaves one audit line (audit.ts).
 */
import { Authenticator, parseBasicOrBearer, retryAfterSeconds, type AuthOutcome } from '../engine/auth/index.js'
import type { Config } from '../engine/config/index.js'
import type { Handler, HttpRequest, HttpResponse } from '../engine/http/index.js'
import type { Logger } from '../engine/log/index.js'
import {
  RELAYED_CLIENT_HEADER,
  apiNetwork,
  type ApiNetwork,
  clientAddress,
  LOOPBACK,
  type ClientAddressRule,
  isLoopbackAddress
} from '../engine/net/index.js'
import { GenerationWatcher, type Store } from '../engine/store/index.js'
import { AuditLog, WRITE_METHODS, writeOf, type Write } from './audit.js'
import { crossSiteRefusal, hostRefusal, mediaTypeRefusal, sendRefusal, type Refusal } from './browser-guard.js'

export const REALM = 'filterd management API'
/** The one path a loopback caller reads without credentials in every setting (rule 3a). */
const HEALTH_PATH = '/health'
const CHALLENGES = [`Bearer realm="${REALM}"`, `Basic realm="${REALM}", charset="UTF-8"`] as const

const RELAYED: ClientAddressRule = { trusted: LOOPBACK, relayHeader: RELAYED_CLIENT_HEADER }

/** The address a request is judged by (see the module comment). */
export function sourceAddress(req: HttpRequest): string {
  return clientAddress(req, RELAYED)
}

export interface ApiGuardOptions {
  readonly store: Store
  /** `api`: the credential switches, and what engine/net/api-network.ts compiles. */
  readonly config: Readonly<Config['api']>
  readonly logger: Logger
  /** Failed verifications allowed per address per minute before 429 (default 10). */
  readonly failureLimit?: number
  readonly now?: () => number
}

export interface ApiGuard {
  /** The handler behind the rule above, with the audit line for writes. */
  wrap(handler: Handler): Handler
  close(): void
}

type Denied = Exclude<AuthOutcome, { ok: true }> | { ok: false; reason: 'required' }

function refuseCredentials(res: HttpResponse, outcome: Denied): void {
  if (outcome.reason === 'throttled') {
    sendRefusal(res, {
      code: 'API_AUTH_THROTTLED',
      message: 'too many failed authentications from this address; retry later',
      headers: [['Retry-After', String(retryAfterSeconds(outcome.retryAfterMs))]]
    })
    return
  }
  sendRefusal(res, {
    code: 'API_UNAUTHORIZED',
    message:
      outcome.reason === 'invalid'
        ? 'wrong API client credentials'
        : 'credentials are required: Authorization: Bearer <token> or HTTP Basic with an API client (filterd api-client add)',
    headers: CHALLENGES.map((c) => ['WWW-Authenticate', c] as const)
  })
}

/** The guard's state and its steps; `createApiGuard` wires it. */
class Guard {
  readonly #auth: Authenticator
  readonly #watcher: GenerationWatcher
  readonly #audit: AuditLog
  readonly #network: ApiNetwork
  readonly #required: boolean
  readonly #loopbackFree: boolean
  readonly #now: () => number

  constructor(options: ApiGuardOptions) {
    const { store } = options
    this.#now = options.now ?? Date.now
    this.#required = options.config['require-credentials']
    this.#loopbackFree = options.config['loopback-without-credentials']
    this.#network = apiNetwork(options.config)
    this.#audit = new AuditLog(options.logger)
    this.#auth = new Authenticator(store, {
      lookup: (id) => store.getApiClient(id),
      parse: parseBasicOrBearer,
      ...(options.failureLimit === undefined ? {} : { failureLimit: options.failureLimit })
    })
    // `filterd api-client remove` in another process bumps the generation: drop the cached verifications.
    this.#watcher = new GenerationWatcher(store, (g) => {
      this.#auth.sync(g)
    })
  }

  sweep(): void {
    this.#auth.failures.sweep(this.#now())
  }

  handle(handler: Handler, req: HttpRequest, res: HttpResponse): void | Promise<void> {
    this.#watcher.poll()
    const header = req.header('authorization')
    const credentials = header !== undefined && header !== ''
    const isWrite = WRITE_METHODS.has(req.method)
    const browser = crossSiteRefusal(req, this.#network.allowedOrigins) ?? mediaTypeRefusal(req)
    // A read with credentials verified before needs nothing else: neither the caller's address nor an audit line.
    if (browser === undefined && !isWrite && credentials && this.#auth.cached(header) !== undefined)
      return handler(req, res)
    const w = writeOf(req, sourceAddress(req))
    if (browser !== undefined) return this.#refuse(res, browser, w)
    if (!credentials) return this.#withoutCredentials(handler, req, res, w)
    const known = this.#auth.cached(header)
    if (known !== undefined) return this.#audit.run(handler, req, res, known, w)
    return this.#auth.authenticate(header, w?.source ?? sourceAddress(req), this.#now()).then((outcome) => {
      if (outcome.ok) return this.#audit.run(handler, req, res, outcome.clientId, w)
      refuseCredentials(res, outcome)
      if (w !== undefined) this.#audit.line(w, '-', res.statusCode)
    })
  }

  /** Rules 2 to 4 of the module comment. */
  #withoutCredentials(
    handler: Handler,
    req: HttpRequest,
    res: HttpResponse,
    w: Write | undefined
  ): void | Promise<void> {
    const source = w?.source ?? sourceAddress(req)
    if (this.#loopbackFree && isLoopbackAddress(source)) {
      const misdirected = hostRefusal(req, this.#network.apiHost)
      if (misdirected !== undefined) return this.#refuse(res, misdirected, w)
      return this.#audit.run(handler, req, res, 'loopback', w)
    }
    if (!this.#required) return this.#audit.run(handler, req, res, 'address-rule', w)
    if (req.method === 'GET' && req.path === HEALTH_PATH && isLoopbackAddress(source)) {
      const misdirected = hostRefusal(req, this.#network.apiHost)
      if (misdirected !== undefined) return this.#refuse(res, misdirected, w)
      return handler(req, res)
    }
    refuseCredentials(res, { ok: false, reason: 'required' })
    if (w !== undefined) this.#audit.line(w, '-', res.statusCode)
  }

  #refuse(res: HttpResponse, refusal: Refusal, w: Write | undefined): void {
    sendRefusal(res, refusal)
    if (w !== undefined) this.#audit.line(w, '-', res.statusCode)
  }
}

export function createApiGuard(options: ApiGuardOptions): ApiGuard {
  const guard = new Guard(options)
  const sweep = setInterval(() => {
    guard.sweep()
  }, 10_000)
  sweep.unref()
  return {
    wrap: (handler) => (req, res) => guard.handle(handler, req, res),
    close() {
      clearInterval(sweep)
    }
  }
}
