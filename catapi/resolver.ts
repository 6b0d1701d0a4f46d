/**
 * "Does this name exist in DNS?", asked of the operator's resolvers (catapi.resolver, else
 * dnscache.forward) for names the category database does not know: the API answers 206
 * `Non-Existing Domain` only when a resolver said NXDOMAIN (RFC 8020: NXDOMAIN means nothing
 * exists at or below the name).
 *
 * One A query with RD per question over UDP, from a fresh socket (so a fresh random source port)
 * with a random ID, checked against the answer's ID and question (RFC 5452 §9.1). Resolvers are
 * tried in order; a timeout, SERVFAIL, REFUSED or a garbled answer moves on to the next one. When
 * none gives a usable answer the outcome is `unknown`, never `nxdomain`.
 *
 * Answers are cached: NXDOMAIN for the negative TTL of the SOA in the authority section (RFC 2308
 * §5: min(SOA TTL, SOA MINIMUM)), or `DEFAULT_NEGATIVE_TTL` when there is none; existing names for
 * the smallest answer TTL. Both are clamped to [MIN_TTL, MAX_TTL]. Concurrent questions for one
 * name share one query. dns-packet is fine here: this is not the DNS server's hot path.
 */
import { createSocket } from 'node:dgram'
import { randomInt } from 'node:crypto'
import dnsPacket from 'dns-packet'
import type { HostPort } from '../engine/config/index.js'

export type Existence = 'exists' | 'nxdomain' | 'unknown'

export interface ExistenceCheckerOptions {
  readonly resolvers: readonly HostPort[]
  /** Per-resolver timeout in ms (default 1000). */
  readonly timeoutMs?: number
  /** Clock for cache expiry (default Date.now). */
  readonly now?: () => number
  /** Largest number of cached names (default 100 000); the oldest entries go first. */
  readonly maxEntries?: number
}

const DEFAULT_NEGATIVE_TTL = 60
const MIN_TTL = 5
const MAX_TTL = 3600
const RCODE_NOERROR = 0
const RCODE_NXDOMAIN = 3

interface CacheEntry {
  readonly value: 'exists' | 'nxdomain'
  readonly expires: number
}

export class ExistenceChecker {
  readonly #resolvers: readonly HostPort[]
  readonly #timeoutMs: number
  readonly #now: () => number
  readonly #maxEntries: number
  readonly #cache = new Map<string, CacheEntry>()
  readonly #inflight = new Map<string, Promise<Existence>>()

  constructor(options: ExistenceCheckerOptions) {
    this.#resolvers = options.resolvers
    this.#timeoutMs = options.timeoutMs ?? 1000
    this.#now = options.now ?? Date.now
    this.#maxEntries = options.maxEntries ?? 100_000
  }

  /** Whether `name` (normalised) exists; `unknown` when no resolver answered usefully. */
  check(name: string): Promise<Existence> {
    const hit = this.#cache.get(name)
    if (hit !== undefined) {
      if (hit.expires > this.#now()) return Promise.resolve(hit.value)
      this.#cache.delete(name)
    }
    let p = this.#inflight.get(name)
    if (p === undefined) {
      p = this.#ask(name).finally(() => {
        this.#inflight.delete(name)
      })
      this.#inflight.set(name, p)
    }
    return p
  }

  async #ask(name: string): Promise<Existence> {
    for (const resolver of this.#resolvers) {
      const answer = await queryOnce(resolver, name, this.#timeoutMs)
      if (answer === undefined) continue
      if (answer.rcode === RCODE_NXDOMAIN) {
        this.#remember(name, 'nxdomain', answer.ttl ?? DEFAULT_NEGATIVE_TTL)
        return 'nxdomain'
      }
      if (answer.rcode === RCODE_NOERROR) {
        this.#remember(name, 'exists', answer.ttl ?? DEFAULT_NEGATIVE_TTL)
        return 'exists'
      }
      // SERVFAIL, REFUSED, …: this resolver cannot tell; ask the next.
    }
    return 'unknown'
  }

  #remember(name: string, value: 'exists' | 'nxdomain', ttl: number): void {
    const seconds = Math.min(MAX_TTL, Math.max(MIN_TTL, ttl))
    if (this.#cache.size >= this.#maxEntries) {
      // Map iterates in insertion order: drop the oldest tenth in one go.
      let n = Math.ceil(this.#maxEntries / 10)
      for (const key of this.#cache.keys()) {
        this.#cache.delete(key)
        if (--n === 0) break
      }
    }
    this.#cache.set(name, { value, expires: this.#now() + seconds * 1000 })
  }
}

interface Answer {
  readonly rcode: number
  readonly ttl: number | undefined
}

/** One UDP query; undefined on timeout, socket error, or an answer that is not for our question. */
function queryOnce(resolver: HostPort, name: string, timeoutMs: number): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    const id = randomInt(0, 0x10000)
    const query = dnsPacket.encode({
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: 'A', class: 'IN', name }]
    })
    const socket = createSocket(resolver.family === 6 ? 'udp6' : 'udp4')
    let done = false
    const finish = (answer: Answer | undefined): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.close()
      resolve(answer)
    }
    const timer = setTimeout(() => {
      finish(undefined)
    }, timeoutMs)
    socket.on('error', () => {
      finish(undefined)
    })
    socket.on('message', (msg, rinfo) => {
      // Only the resolver we asked may answer (an off-path spoofer must also guess port and ID).
      if (rinfo.port !== resolver.port) return
      let packet: dnsPacket.DecodedPacket
      try {
        packet = dnsPacket.decode(msg)
      } catch {
        return
      }
      const q = packet.questions?.[0]
      if (packet.id !== id || packet.type !== 'response' || q === undefined || q.name.toLowerCase() !== name) return
      finish({ rcode: (packet.flags ?? 0) & 0x0f, ttl: ttlOf(packet) })
    })
    socket.send(query, resolver.port, resolver.host, (err) => {
      if (err !== null && err !== undefined) finish(undefined)
    })
  })
}

/** Positive: the smallest answer TTL. Negative: min(SOA TTL, SOA MINIMUM) of the authority SOA (RFC 2308 §5). */
function ttlOf(packet: dnsPacket.DecodedPacket): number | undefined {
  let ttl: number | undefined
  for (const a of packet.answers ?? []) {
    const t = (a as { ttl?: unknown }).ttl
    if (typeof t === 'number') ttl = ttl === undefined ? t : Math.min(ttl, t)
  }
  if (ttl !== undefined) return ttl
  for (const a of packet.authorities ?? []) {
    if (a.type === 'SOA') return Math.min(a.ttl ?? DEFAULT_NEGATIVE_TTL, a.data.minimum ?? DEFAULT_NEGATIVE_TTL)
  }
  return undefined
}
