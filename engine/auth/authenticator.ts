/**
 * Authentication of an API client on every request: the categorization API's registered listener
 * (HTTP Basic, the store's catapi clients) and the management API (Basic or Bearer, the store's API
 * clients) run this one class, with their own client table and header syntax.
 *
 * scrypt costs tens of milliseconds by design, so a verified `Authorization` header is remembered:
 * the cache maps the exact header text to the client id. A lookup is then one Map probe on a
 * string, the one per-request cost of registered access. (It used to be keyed by SHA-256 of the
 * header, to keep secrets out of a long-lived structure; measured in the server, that hash cost
 * 2.3 µs of a ~17 µs request, and the header with the secret is in this process's memory on every
 * request anyway. Exact text, not a short hash, so no two headers can ever share an entry.)
 * The cache is dropped whenever the store's generation moves (every `Store.write` bumps it, so
 * `filterd client rotate|remove` or `filterd api-client remove` in another process takes effect
 * for every request that starts GENERATION_CHECK_MS later: engine/store/generation.ts) and is
 * bounded in size.
 *
 * An unknown client id gets the same scrypt work as a known one with a wrong secret (the time of a
 * 401 must not say which ids exist). Concurrent first requests with one header share one scrypt run. Failed verifications are counted
 * per source address; past `failureLimit` in a minute the address gets 429 with `Retry-After`
 * instead of more scrypt work (brute force and CPU exhaustion both stop there). Headers already in
 * the cache are still accepted from a throttled address, so one noisy host behind a shared NAT
 * does not lock out a client that had already authenticated.
 */
import type { ClientRecord, Store } from '../store/index.js'
import { parseBasic, verifySecret, verifyUnknown, type Credentials } from './credentials.js'
import { SlidingWindowLimiter } from './limiter.js'

export type AuthOutcome =
  | { readonly ok: true; readonly clientId: string }
  | { readonly ok: false; readonly reason: 'missing' | 'invalid' }
  | { readonly ok: false; readonly reason: 'throttled'; readonly retryAfterMs: number }

export interface AuthenticatorOptions {
  /** Failed verifications allowed per address per minute before 429 (default 10). */
  readonly failureLimit?: number
  readonly failureWindowMs?: number
  /** Most cached headers (default 10 000); the cache is cleared when full. */
  readonly maxCached?: number
  /** The record of a client id (default: the categorization API's clients, `store.getClient`). */
  readonly lookup?: (id: string) => ClientRecord | undefined
  /** Reads the claimed credentials from the header (default: HTTP Basic only). */
  readonly parse?: (header: string) => Credentials | undefined
}

export class Authenticator {
  readonly #store: Store
  readonly #verified = new Map<string, string>()
  readonly #inflight = new Map<string, Promise<string | undefined>>()
  readonly #maxCached: number
  readonly #lookup: (id: string) => ClientRecord | undefined
  readonly #parse: (header: string) => Credentials | undefined
  readonly failures: SlidingWindowLimiter
  #generation: number

  constructor(store: Store, options: AuthenticatorOptions = {}) {
    this.#store = store
    this.#maxCached = options.maxCached ?? 10_000
    this.#lookup = options.lookup ?? ((id) => store.getClient(id))
    this.#parse = options.parse ?? parseBasic
    this.failures = new SlidingWindowLimiter(options.failureLimit ?? 10, options.failureWindowMs ?? 60_000)
    this.#generation = store.generation()
  }

  /** Drops cached verifications when the store changed since the last call; `generation` is the store's. */
  sync(generation: number): void {
    if (generation !== this.#generation) {
      this.#generation = generation
      this.#verified.clear()
    }
  }

  /** The client id for a header verified before (and not invalidated since), without any await. */
  cached(header: string): string | undefined {
    return this.#verified.get(header)
  }

  /** Full check: cache, then throttle, then scrypt. `address` is the throttling key. */
  async authenticate(header: string | undefined, address: string, now: number): Promise<AuthOutcome> {
    if (header === undefined || header === '') return { ok: false, reason: 'missing' }
    const known = this.#verified.get(header)
    if (known !== undefined) return { ok: true, clientId: known }
    const gate = this.failures.check(address, now)
    if (!gate.allowed) return { ok: false, reason: 'throttled', retryAfterMs: gate.retryAfterMs }
    let p = this.#inflight.get(header)
    if (p === undefined) {
      p = this.#verify(header).finally(() => {
        this.#inflight.delete(header)
      })
      this.#inflight.set(header, p)
    }
    const id = await p
    if (id !== undefined) return { ok: true, clientId: id }
    this.failures.record(address, now)
    return { ok: false, reason: 'invalid' }
  }

  async #verify(header: string): Promise<string | undefined> {
    const creds = this.#parse(header)
    if (creds === undefined) return undefined
    // The server reads the generation on a coarse clock; a verification is rare, so catch up here.
    // Otherwise a write made just before this verification, noticed later, would drop its result.
    this.sync(this.#store.generation())
    const generation = this.#generation
    const record = this.#lookup(creds.id)
    // An unknown id costs the same scrypt run as a wrong secret: answering it at once would let
    // anyone list the client ids that exist by timing 401s.
    if (record === undefined) {
      await verifyUnknown(creds.secret)
      return undefined
    }
    if (!(await verifySecret(creds.secret, record))) return undefined
    // A write that landed while scrypt ran (a rotate, say) must not be undone by caching the old answer.
    if (generation === this.#generation) {
      if (this.#verified.size >= this.#maxCached) this.#verified.clear()
      this.#verified.set(header, creds.id)
    }
    return creds.id
  }
}
