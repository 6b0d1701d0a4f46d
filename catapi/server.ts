/**
 * The categorization API (categorization-api.md): `GET /domain/<name>`, `GET /url/<full_url>` and
 * `GET /catgroups`, served twice from one lookup core: on the registered listener behind HTTP Basic
 * (every request, counted per client per day for billing) and on the anonymous listener behind a
 * per-address limit of `anonLimit` requests per minute. docs/catapi.md is the operator's view.
 *
 * Hot path (a registered lookup of a categorized name) stays synchronous (docs/conventions.md, "Hot paths"
 * 3): a `meta` read at most every GENERATION_CHECK_MS (engine/store/generation.ts) to notice store writes,
 * one Map probe for the cached verification of the Authorization header, a Map increment for usage, the
 * suffix walk over the category database, and a pre-serialised body per distinct category set. Only a
 * cache miss (scrypt) or an uncategorized name (the resolver) awaits. bench/results/2026-11-history.md has what each
 * step costs.
 *
 * This file wires the pieces: lookup.ts (the category database, the bodies, the generation watcher),
 * handlers.ts (the three routes), gates.ts (credentials and usage, or the anonymous limit).
 */
import { createHttpMetrics } from '../engine/metrics/index.js'
import { createHttpServer, type HttpRequest, type HttpServer } from '../engine/http/index.js'
import type { Taxonomy } from '../engine/categories/index.js'
import type { Store } from '../engine/store/index.js'
import type { Logger } from '../engine/log/index.js'
import { Authenticator, SlidingWindowLimiter, type AuthenticatorOptions } from '../engine/auth/index.js'
import { anonymousGate, registeredGate, type Gate } from './gates.js'
import { createHandlers, type ExistenceSource } from './handlers.js'
import { CatLookup } from './lookup.js'
import { UsageCounter } from './usage.js'

export { type ExistenceSource } from './handlers.js'
export { rateKeyOf } from './gates.js'

export const DEFAULT_REALM = 'filterd categorization API'

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
  listen(
    registered: { host: string; port: number },
    anonymous: { host: string; port: number }
  ): Promise<{ registered: number; anonymous: number }>
  /** Stops both listeners and timers and flushes usage. The store stays open (its owner closes it). */
  close(): Promise<void>
}

/**
 * Creates both servers (not listening yet).
 *
 * @example
 * const api = createCatApi({ store, taxonomy: loadTaxonomy('conf', 'en'), existence: new ExistenceChecker({ resolvers }) })
 * await api.listen({ host: '127.0.0.1', port: 8081 }, { host: '127.0.0.1', port: 8082 })
 */
export function createCatApi(options: CatApiOptions): CatApi {
  const { store, logger } = options
  const now = options.now ?? Date.now
  const auth = new Authenticator(store, options.auth)
  const usage = new UsageCounter(store, {
    ...(options.usageTimeZone === undefined ? {} : { timeZone: options.usageTimeZone }),
    now
  })
  const anonLimiter = new SlidingWindowLimiter(options.anonLimit ?? 10, options.anonWindowMs ?? 60_000)
  const lookup = new CatLookup(store, options.taxonomy, (g) => {
    auth.sync(g)
  })
  const handlers = createHandlers(lookup, options.existence)
  const challenge = `Basic realm="${(options.realm ?? DEFAULT_REALM).replace(/["\\]/g, '')}", charset="UTF-8"`

  const onError = (err: unknown, req: HttpRequest): void => {
    logger?.error({ err, path: req.path }, 'catapi handler failed')
  }
  const metrics = createHttpMetrics('catapi')
  const build = (gate: Gate): HttpServer => {
    const server = createHttpServer({
      ...(options.impl === undefined ? {} : { impl: options.impl }),
      ...(logger === undefined
        ? {}
        : {
            logger: {
              warn: (m: string) => {
                logger.warn(m)
              }
            }
          }),
      bodyLimit: 0,
      onError
    })
    server.route('GET', '/domain/*', metrics.wrap('/domain/*', gate(handlers.domain)))
    server.route('GET', '/url/*', metrics.wrap('/url/*', gate(handlers.url)))
    server.route('GET', '/catgroups', metrics.wrap('/catgroups', gate(handlers.catgroups)))
    metrics.mount(server)
    return server
  }
  const registered = build(registeredGate({ lookup, auth, usage, challenge, now }))
  const anonymous = build(anonymousGate(lookup, anonLimiter, now))

  const flushTimer = setInterval(() => {
    usage.flush().catch((err: unknown) => {
      logger?.error({ err }, 'catapi usage flush failed; will retry')
    })
  }, options.usageFlushMs ?? 5000)
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
    async listen(reg, anon) {
      const r = await registered.listen(reg.host, reg.port)
      try {
        const a = await anonymous.listen(anon.host, anon.port)
        return { registered: r.port, anonymous: a.port }
      } catch (err) {
        await registered.close()
        throw err
      }
    },
    async close() {
      clearInterval(flushTimer)
      clearInterval(sweepTimer)
      await Promise.all([registered.close(), anonymous.close()])
      await usage.flush()
    }
  }
}
