/**
 * The categorization API (categorization-api.md): `GET /domain/<name>`, `GET /url/<full_url>` and
 * `GET /catgroups`, served twice from one lookup core: on the registered listener behind HTTP Basic
 * (every request, counted per client per day for billing) and on the anonymous listener behind a
 * per-address limit of `anonLimit` requests per minute. docs/catapi.md is the operator's view.
 *
 * Hot path (a registered lookup of a categorized name) stays synchronous, as STYLE E.3 asks: a
 * `meta` read at most every GENERATION_CHECK_MS (engine/store/generation.ts) to notice store writes, one Map probe for the cached
 * verification of the Authorization header, a Map increment for usage, the suffix walk over the
 * category database, and a pre-serialised body per distinct category set. Only a cache miss
 * (scrypt) or an uncategorized name (the resolver) awaits. docs/performance.md has what each
 * step costs.
 */
import { ipBytes } from '../engine/net/ip.js'
import { createHttpMetrics } from '../engine/metrics/http.js'
import { createHttpServer, errorBody, type HttpRequest, type HttpResponse, type HttpServer, type Handler } from '../engine/http/index.js'
import { CategoryDb, decodeCats, encodeCats } from '../engine/catdb/index.js'
import type { Taxonomy } from '../engine/categories/index.js'
import { HostKeys, isIPv4, normalizeDomain, normalizeLookupUrl } from '../engine/names/index.js'
import { GenerationWatcher, type Store } from '../engine/store/index.js'
import { nonExistingVerdict, toAsciiJson, verdictOf } from '../engine/verdict/index.js'
import type { Logger } from '../engine/log/index.js'
import { Authenticator, SlidingWindowLimiter, retryAfterSeconds, type AuthenticatorOptions } from '../engine/auth/index.js'
import { CATAPI_ERRORS, type CatApiErrorCode } from './errors.js'
import type { Existence } from './resolver.js'
import { UsageCounter } from './usage.js'

/** Clients may cache answers for at most 12 hours (spec, "Limits"). */
export const CACHE_CONTROL = 'max-age=43200'
/** Errors, throttling and answers that depend on a resolver outage must not be cached. */
export const NO_STORE = 'no-store'
/** The spec's fixed name for category 0 in the 206 answer. */
export const NON_EXISTING_NAME = 'Non-Existing Domain'
export const DEFAULT_REALM = 'filterd categorization API'

/** Anything that can say whether a name exists (ExistenceChecker, or a test double). */
export interface ExistenceSource {
  check (name: string): Promise<Existence>
}

export interface CatApiOptions {
  readonly store: Store
  readonly taxonomy: Taxonomy
  readonly existence: ExistenceSource
  /** Anonymous requests per minute per source address (default 10). */
  readonly anonLimit?: number
  readonly anonWindowMs?: number
  readonly auth?: AuthenticatorOptions
  /** Time zone of the billing day (default UTC). */
  readonly usageTimeZone?: string
  /** How often usage counts are written to the store, ms (default 5000). */
  readonly usageFlushMs?: number
  readonly realm?: string
  readonly impl?: 'auto' | 'uws' | 'node'
  readonly logger?: Logger
  /** Clock (default Date.now); tests move it to check Retry-After. */
  readonly now?: () => number
}

export interface CatApi {
  readonly registered: HttpServer
  readonly anonymous: HttpServer
  readonly usage: UsageCounter
  readonly authenticator: Authenticator
  /** Binds both listeners; port 0 picks free ports. */
  listen (registered: { host: string, port: number }, anonymous: { host: string, port: number }): Promise<{ registered: number, anonymous: number }>
  /** Stops both listeners and timers and flushes usage. The store stays open (its owner closes it). */
  close (): Promise<void>
}

const JSON_TYPE = 'application/json'

function sendJsonError (res: HttpResponse, code: CatApiErrorCode, message: string): void {
  res.status(CATAPI_ERRORS[code]).header('Content-Type', JSON_TYPE).header('Cache-Control', NO_STORE).send(errorBody(code, message))
}

// normalizeLookupUrl drops the port after checking only that it is 1-5 digits.
const AUTHORITY_PORT = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^/?#]*:(\d+)(?:[/?#]|$)/
function hasValidPort (url: string): boolean {
  const m = AUTHORITY_PORT.exec(url)
  return m === null || Number(m[1]) <= 65535
}

/** The anonymous limit's key: the IPv4 address, or the /64 of an IPv6 one (one subscriber's LAN). */
export function rateKeyOf (address: string): string {
  if (!address.includes(':')) return address
  const b = ipBytes(address)
  if (b === undefined || b.length !== 16) return address
  return Buffer.from(b.subarray(0, 8)).toString('hex') + '::/64'
}

/**
 * Creates both servers (not listening yet).
 *
 * @example
 * const api = createCatApi({ store, taxonomy: loadTaxonomy('conf', 'en'), existence: new ExistenceChecker({ resolvers }) })
 * await api.listen({ host: '127.0.0.1', port: 8081 }, { host: '127.0.0.1', port: 8082 })
 */
export function createCatApi (options: CatApiOptions): CatApi {
  const { store, taxonomy, existence } = options
  const now = options.now ?? Date.now
  const realm = options.realm ?? DEFAULT_REALM
  const wwwAuthenticate = `Basic realm="${realm.replace(/["\\]/g, '')}", charset="UTF-8"`
  const logger = options.logger
  const catdb = new CategoryDb(store)
  const auth = new Authenticator(store, options.auth)
  const usage = new UsageCounter(store, { ...(options.usageTimeZone === undefined ? {} : { timeZone: options.usageTimeZone }), now })
  const anonLimiter = new SlidingWindowLimiter(options.anonLimit ?? 10, options.anonWindowMs ?? 60_000)
  // Bodies are kept as bytes: sent as they are, with no UTF-8 conversion per request.
  const catgroupsBody = Buffer.from(toAsciiJson(taxonomy.groups))
  // The spec fixes this answer's text (`category_name` = ["Non-Existing Domain"]); integrations match
  // on it, so it stays English even when category names are Russian.
  const nonExistingBody = Buffer.from(toAsciiJson({ ...nonExistingVerdict(taxonomy), category_name: [NON_EXISTING_NAME] }))

  // Serialised verdicts by category set: there are few distinct sets, and a hit then costs one Map
  // lookup instead of building and escaping JSON. The key is a number for one or two categories
  // (most names; no string is built per request), else the raw uint16 bytes as a latin1 string.
  let bodies = new Map<number | string, Buffer>()
  const bodyFor = (rawCats: Buffer): Buffer => {
    const n = rawCats.length
    const key = n === 2
      ? rawCats.readUInt16BE(0)
      : n === 4 ? rawCats.readUInt32BE(0) + 0x1_0000_0000 : rawCats.toString('latin1')
    let body = bodies.get(key)
    if (body === undefined) {
      body = Buffer.from(toAsciiJson(verdictOf(decodeCats(rawCats), taxonomy)))
      if (bodies.size >= 10_000) bodies = new Map()
      bodies.set(key, body)
    }
    return body
  }

  // Every store write (clients, a category rebuild) bumps the generation; it is polled per request,
  // so a write is enforced for every request that starts GENERATION_CHECK_MS after it.
  const watcher = new GenerationWatcher(store, (g) => {
    auth.sync(g)
    if (catdb.refresh()) bodies = new Map()
  })
  const follow = (): void => { watcher.poll() }

  const sendVerdict = (res: HttpResponse, status: number, body: Buffer): void => {
    res.status(status).header('Content-Type', JSON_TYPE).header('Cache-Control', CACHE_CONTROL).send(body)
  }

  // Not categorized: 206 when a resolver says NXDOMAIN, else 404 without a body. A resolver outage
  // is not NXDOMAIN: 404 still tells the truth (the name is not categorized), but `no-store`, so the
  // client asks again instead of keeping an answer we could not complete for 12 hours.
  const answerUncategorized = async (res: HttpResponse, host: string): Promise<void> => {
    if (isIPv4(host)) {
      res.status(404).header('Cache-Control', CACHE_CONTROL).send()
      return
    }
    const outcome = await existence.check(host)
    if (outcome === 'nxdomain') sendVerdict(res, 206, nonExistingBody)
    else res.status(404).header('Cache-Control', outcome === 'exists' ? CACHE_CONTROL : NO_STORE).send()
  }

  const domain: Handler = (req, res) => {
    let raw = req.rawParams['*'] ?? ''
    if (raw.includes('%')) {
      try {
        raw = decodeURIComponent(raw)
      } catch {
        sendJsonError(res, 'CATAPI_BAD_DOMAIN', 'malformed percent-encoding in the domain name')
        return
      }
    }
    const name = normalizeDomain(raw)
    if (name === undefined) {
      sendJsonError(res, 'CATAPI_BAD_DOMAIN', 'not a valid domain name')
      return
    }
    // Undecoded categories: nothing is decoded on a hit whose body is cached.
    const hit = catdb.findRaw(new HostKeys(name))
    if (hit !== undefined) {
      sendVerdict(res, 200, bodyFor(hit.raw))
      return
    }
    return answerUncategorized(res, name)
  }

  const url: Handler = (req, res) => {
    let full = req.rawParams['*'] ?? ''
    if (req.query !== '') full += '?' + req.query
    // A client that encoded the whole URL as one path segment (encodeURIComponent: `https%3A%2F%2F…`)
    // is decoded once; otherwise the URL is used exactly as received, escapes included.
    if (/^[A-Za-z][A-Za-z0-9+.-]*%3A/i.test(full)) {
      try {
        full = decodeURIComponent(full)
      } catch {
        sendJsonError(res, 'CATAPI_BAD_URL', 'malformed percent-encoding in the URL')
        return
      }
    }
    const lu = full === '' || !hasValidPort(full) ? undefined : normalizeLookupUrl(full)
    if (lu === undefined) {
      sendJsonError(res, 'CATAPI_BAD_URL', 'not a valid URL (expected scheme://host/path?query)')
      return
    }
    const site = catdb.categorizeUrl(lu.host, lu.pathAndQuery)
    if (site !== undefined) {
      sendVerdict(res, 200, bodyFor(encodeCats(site.categories)))
      return
    }
    return answerUncategorized(res, lu.host)
  }

  const catgroups: Handler = (_req, res) => {
    sendVerdict(res, 200, catgroupsBody)
  }

  const onError = (err: unknown, req: HttpRequest): void => {
    logger?.error({ err, path: req.path }, 'catapi handler failed')
  }

  const registeredGate = (inner: Handler): Handler => (req, res) => {
    follow()
    const header = req.header('authorization')
    if (header !== undefined) {
      const id = auth.cached(header)
      if (id !== undefined) {
        usage.count(id)
        return inner(req, res)
      }
    }
    return auth.authenticate(header, req.remoteAddress, now()).then((outcome) => {
      if (outcome.ok) {
        usage.count(outcome.clientId)
        return inner(req, res)
      }
      if (outcome.reason === 'throttled') {
        res.header('Retry-After', String(retryAfterSeconds(outcome.retryAfterMs)))
        sendJsonError(res, 'CATAPI_AUTH_THROTTLED', 'too many failed authentications from this address; retry later')
        return
      }
      res.header('WWW-Authenticate', wwwAuthenticate)
      sendJsonError(res, 'CATAPI_UNAUTHORIZED', outcome.reason === 'missing'
        ? 'HTTP Basic credentials (client_id:client_secret) are required'
        : 'wrong client_id or client_secret')
    })
  }

  const anonymousGate = (inner: Handler): Handler => (req, res) => {
    const decision = anonLimiter.take(rateKeyOf(req.remoteAddress), now())
    if (!decision.allowed) {
      res.header('Retry-After', String(retryAfterSeconds(decision.retryAfterMs)))
      sendJsonError(res, 'CATAPI_RATE_LIMITED', `anonymous access is limited to ${anonLimiter.limit} requests per minute`)
      return
    }
    follow()
    return inner(req, res)
  }

  const metrics = createHttpMetrics('catapi')
  const build = (gate: (h: Handler) => Handler): HttpServer => {
    const server = createHttpServer({ ...(options.impl === undefined ? {} : { impl: options.impl }), ...(logger === undefined ? {} : { logger: { warn: (m: string) => { logger.warn(m) } } }), bodyLimit: 0, onError })
    server.route('GET', '/domain/*', metrics.wrap('/domain/*', gate(domain)))
    server.route('GET', '/url/*', metrics.wrap('/url/*', gate(url)))
    server.route('GET', '/catgroups', metrics.wrap('/catgroups', gate(catgroups)))
    metrics.mount(server)
    return server
  }
  const registered = build(registeredGate)
  const anonymous = build(anonymousGate)

  const flushMs = options.usageFlushMs ?? 5000
  const flush = (): void => {
    usage.flush().catch((err: unknown) => { logger?.error({ err }, 'catapi usage flush failed; will retry') })
  }
  const flushTimer = setInterval(flush, flushMs)
  flushTimer.unref()
  const sweepTimer = setInterval(() => {
    const t = now()
    anonLimiter.sweep(t)
    auth.failures.sweep(t)
  }, 10_000)
  sweepTimer.unref()

  return {
    registered,
    anonymous,
    usage,
    authenticator: auth,
    async listen (reg, anon) {
      const r = await registered.listen(reg.host, reg.port)
      try {
        const a = await anonymous.listen(anon.host, anon.port)
        return { registered: r.port, anonymous: a.port }
      } catch (err) {
        await registered.close()
        throw err
      }
    },
    async close () {
      clearInterval(flushTimer)
      clearInterval(sweepTimer)
      await Promise.all([registered.close(), anonymous.close()])
      await usage.flush()
    }
  }
}
