/*
 * Forwarding to the operator's resolvers (`dnscache.forward`): tries and failover. The parts live
 * in ./upstream/: resolver health (resolver.ts), the UDP sockets with their pending table
 * (socket-pool.ts), the try queue and its timeouts (tries.ts), TCP (tcp.ts), and the query in
 * flight with its origin (pending.ts).
 *
 * Spoofing defences (RFC 5452): every forwarded query gets a fresh random ID from `crypto` and
 * leaves from one of a small pool of UDP sockets bound to random ports and connected to the
 * resolver (a connected send also skips dgram's per-send address lookup: a few µs per query on
 * the hot path); one socket of each pool is replaced every `rotateMs`. An answer is accepted only
 * from the resolver the query went to, on the socket it left from, with its ID and its question
 * (name case-insensitively, type, class). The client's ID is then written back and the bytes
 * relayed otherwise unchanged (TC answers too).
 *
 * Timeouts and failover, the way dnsdist and Unbound do it: the client's budget is `timeoutMs`.
 * It is split into `attempts` tries (one per resolver, at most 3) of `timeoutMs / attempts`
 * each; a try that gets no answer in its share is sent again, with a fresh ID, to the next
 * resolver, so a dead resolver costs a client one share of latency and never a SERVFAIL while
 * another one answers. A REFUSED, SERVFAIL or NOTIMP answer goes on to the next resolver at once,
 * within the same budget: those say "not from me" (an ACL, a resolver in a bad state, a failed
 * validation there), and another resolver may well answer; when every try ends that way (or the
 * budget ends after one did), the client gets the last of those answers. Any other RCODE,
 * NXDOMAIN first of all, is an answer about the name and is relayed: asking elsewhere would only
 * shop for a different truth. Only when the whole budget is spent with no answer at all does the
 * client get SERVFAIL. Users' queries go to the first resolver that is up (to a down one only
 * when all are down; resolver.ts says what marks one down). A down resolver is probed in the
 * background, every `probeMs`, with a query of our own (`. NS`); a good answer marks it up
 * again. So no user query is spent finding out whether a resolver came back.
 *
 * TCP clients' queries are asked over UDP and asked again over TCP only when the answer comes
 * back truncated (see forwardTcp).
 */
import { performance } from 'node:perf_hooks'
import type { ResolverSnapshot } from '../engine/metrics/index.js'
import { rcodeLabel, type DnsMetrics } from './metrics.js'
import {
  QueryScratch,
  QUERY_OK,
  RCODE_NOTIMP,
  RCODE_REFUSED,
  RCODE_SERVFAIL,
  questionMatches,
  readId,
  readQuery,
  setId
} from '../engine/wire/index.js'
import { PendingQuery } from './upstream/pending.js'
import { Resolver, type HealthLogger, type ResolverAddress } from './upstream/resolver.js'
import { SocketPool, type OutSocket } from './upstream/socket-pool.js'
import { TryQueue } from './upstream/tries.js'
import { TcpTries } from './upstream/tcp.js'

export { PendingQuery, type QueryOrigin, type UpstreamAnswerHandler } from './upstream/pending.js'
export type { ResolverAddress } from './upstream/resolver.js'

export interface ForwarderOptions {
  resolvers: readonly ResolverAddress[]
  /** The client's whole budget: SERVFAIL when no resolver answered within it. */
  timeoutMs: number
  /** UDP sockets per resolver. */
  socketsPerResolver?: number
  rotateMs?: number
  /** How often a down resolver is probed (default 500 ms). */
  probeMs?: number
  /** UDP I/O: node:dgram (default) or the native batched addon (engine/udp). */
  io?: 'native' | 'dgram'
  /** Where resolvers' state changes and unreachable resolvers are reported. */
  logger?: HealthLogger
  /** Counts every try that timed out (`filterd_dns_upstream_timeouts_total`). */
  metrics?: Pick<DnsMetrics, 'countUpstreamTimeout'>
}

/** Tries per client query at most (one per resolver): dnsdist and Unbound settle on a few. */
const MAX_TRIES = 3
// `. NS`, RD set: every recursive resolver answers it from its cache.
const PROBE_QUERY = Buffer.from([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1])

/** The answers that fail over to the next resolver (see the top of this file). */
function failsOver(rcode: number): boolean {
  return rcode === RCODE_REFUSED || rcode === RCODE_SERVFAIL || rcode === RCODE_NOTIMP
}

export class Forwarder {
  private resolvers: Resolver[]
  /** Taken out by reconfigure: kept until their sockets' tries are done. */
  private removed: Resolver[] = []
  private readonly timeoutMs: number
  private readonly sweepMs: number
  private tryMs = 0
  private maxTries = 0
  private readonly probeMs: number
  private readonly rotateMs: number
  private readonly pool: SocketPool
  private readonly tries = new TryQueue()
  private readonly tcp: TcpTries
  private readonly logger: HealthLogger | null
  private readonly metrics: Pick<DnsMetrics, 'countUpstreamTimeout'> | null
  private lastRotate = 0
  private lastProbe = 0
  private readonly sweeper: NodeJS.Timeout
  private readonly scratch = new QueryScratch()
  private reconfiguring: Promise<void> = Promise.resolve()
  private closed = false
  /** Clients' queries forwarded and not yet finished (answered, failed or withdrawn). */
  private waitingClients = 0

  private constructor(o: ForwarderOptions) {
    if (o.resolvers.length === 0) throw new Error('dnscache.forward names no resolver')
    this.logger = o.logger ?? null
    this.metrics = o.metrics ?? null
    this.resolvers = o.resolvers.map((r) => new Resolver(r, this.logger))
    this.timeoutMs = o.timeoutMs
    // The sweep notices an expired try up to one interval late, so a try's timeout is its share
    // of the budget minus that interval: all tries together end within `timeoutMs`.
    this.sweepMs = Math.max(10, Math.min(50, Math.floor(o.timeoutMs / Math.min(MAX_TRIES, this.resolvers.length)) >> 3))
    this.setBudget()
    this.probeMs = o.probeMs ?? 500
    this.rotateMs = o.rotateMs ?? 15_000
    this.pool = new SocketPool({
      io: o.io ?? 'dgram',
      size: o.socketsPerResolver ?? 4,
      logger: this.logger,
      onDatagram: (out, msg, port, address) => this.onDatagram(out, msg, port, address),
      onUnreachable: (r) => {
        r.counters.countError('network')
        r.down('ICMP port unreachable: nothing listens there')
      }
    })
    this.tcp = new TcpTries({
      nextId: () => this.pool.nextId(),
      matches: (p, m) => this.matches(p, m),
      onAnswer: (p, r, m) => this.answered(p, r, m),
      onFailure: (p, r, why) => {
        if (p.origin !== null) r.counters.countError('network')
        r.down(why)
        this.tryFailed(p, Date.now())
      }
    })
    this.lastRotate = Date.now()
    this.sweeper = setInterval(() => this.sweep(), this.sweepMs)
    this.sweeper.unref()
  }

  static async create(o: ForwarderOptions): Promise<Forwarder> {
    const f = new Forwarder(o)
    for (const r of f.resolvers) await f.pool.fill(r)
    return f
  }

  // One try per resolver (at most MAX_TRIES), each a share of the budget minus the sweep's lateness.
  private setBudget(): void {
    this.maxTries = Math.min(MAX_TRIES, this.resolvers.length)
    this.tryMs = Math.max(5, Math.floor(this.timeoutMs / this.maxTries) - this.sweepMs)
  }

  /**
   * Swaps the resolver list live (`dnscache.forward` as parsed, in its order). A resolver in both
   * lists keeps its sockets, state and counters; a new one gets sockets before it takes queries;
   * one taken out gets no new tries, and its sockets stay open until the tries in flight on them
   * are answered or timed out (a try that times out goes on to the new list). Calls run one after
   * another.
   */
  async reconfigure(list: readonly ResolverAddress[]): Promise<void> {
    if (list.length === 0) throw new Error('dnscache.forward names no resolver')
    const run = this.reconfiguring.then(async () => await this.swapResolvers(list))
    this.reconfiguring = run.catch(() => {})
    await run
  }

  private async swapResolvers(list: readonly ResolverAddress[]): Promise<void> {
    if (this.closed) return
    const next = list.map((a) => this.resolvers.find((r) => r.is(a)) ?? new Resolver(a, this.logger))
    const fresh = next.filter((r) => !this.resolvers.includes(r))
    for (const r of fresh) await this.pool.fill(r)
    if (this.closed) {
      for (const r of fresh) {
        this.pool.retireAll(r)
        this.pool.reap(r, Date.now(), -1)
      }
      return
    }
    for (const r of this.resolvers) {
      if (next.includes(r)) continue
      r.removed = true
      this.pool.retireAll(r)
      this.removed.push(r)
    }
    this.resolvers = next
    this.setBudget()
  }

  /** Every resolver's state and counters, in list order (the metrics snapshot). */
  resolverSnapshots(): ResolverSnapshot[] {
    return this.resolvers.map((r) => r.snapshot())
  }

  /** Clients' queries waiting for an upstream answer (`filterd_dns_upstream_pending`). */
  get pending(): number {
    return this.waitingClients
  }

  /** Sends `p.query` upstream over UDP (a client's query: `p.origin` set). */
  forwardUdp(p: PendingQuery): void {
    this.waitingClients++
    const now = Date.now()
    p.deadline = now + this.timeoutMs
    p.viaTcp = false
    const r = this.pickResolver(null, null)
    if (r === null) this.finish(p, null)
    else this.sendUdp(p, r, now)
  }

  /**
   * Withdraws a client's query whose client went away before its answer (a DoH stream the client
   * reset, its connection closed): its try leaves the pending table (its ID is free again, a late
   * answer is dropped as unknown, a TCP try's connection is closed), its timeout entry goes stale,
   * and no answer is handed back. Every forwarded query is its own (the dispatcher never coalesces
   * two clients' queries into one), so no other client waits on it. False when it was already
   * answered or failed.
   */
  withdraw(p: PendingQuery): boolean {
    if (p.done || p.origin === null) return false
    p.done = true
    this.waitingClients--
    if (p.viaTcp) this.tcp.abandon(p)
    else this.pool.release(p)
    return true
  }

  /**
   * A TCP client's query: asked over UDP like any other, and again over TCP (one connection per
   * try) only when the answer comes back truncated, as a recursive resolver forwarding does. A
   * connection per query would make every pipelined TCP client query a TCP handshake with the
   * operator's resolver: slow for us, and a way for one client to open connections by the
   * thousand. A try that fails goes to the next resolver on the transport it was on.
   */
  forwardTcp(p: PendingQuery): void {
    p.streamClient = true
    this.forwardUdp(p)
  }

  // The first resolver that is up and not one of the query's last two tries' (`a`, `b`); else
  // one that is up and not `a`; when none is up, the next one after `a` in the list (or the
  // first). Only resolvers with sockets count; null when none has any (every one unreachable).
  private pickResolver(a: Resolver | null, b: Resolver | null): Resolver | null {
    const list = this.resolvers
    for (const r of list) if (r.up && r !== a && r !== b && r.pool.length > 0) return r
    for (const r of list) if (r.up && r !== a && r.pool.length > 0) return r
    const start = a === null ? 0 : list.indexOf(a) + 1
    for (let i = 0; i < list.length; i++) {
      const r = list[(start + i) % list.length]!
      if (r.pool.length > 0) return r
    }
    return null
  }

  private beginTry(p: PendingQuery, r: Resolver): void {
    p.earlier = p.resolver
    p.resolver = r
    p.tries++
    if (p.origin !== null) {
      r.counters.queries++
      p.sentAt = performance.now()
    }
  }

  private sendUdp(p: PendingQuery, r: Resolver, now: number): void {
    this.beginTry(p, r)
    // 16 ID collisions: the socket is saturated.
    if (!this.pool.send(p, r)) {
      this.finish(p, p.lastError)
      return
    }
    this.tries.push(p, now + this.tryMs)
  }

  private sendTcp(p: PendingQuery, r: Resolver): void {
    p.viaTcp = true
    this.beginTry(p, r)
    this.tcp.send(p, r)
    this.tries.push(p, Date.now() + this.tryMs)
  }

  private onDatagram(out: OutSocket, msg: Buffer, fromPort: number, fromAddress: string): void {
    const id = readId(msg)
    if (id < 0) return
    const p = out.waiting[id]
    const r = p?.resolver
    if (p === undefined || r == null || fromPort !== r.port || fromAddress !== r.host || !this.matches(p, msg)) {
      return
    }
    this.pool.release(p)
    if (p.streamClient && (msg[2]! & 0x02) !== 0) {
      // TC: the answer does not fit a datagram, and this client can take it over TCP.
      this.sendTcp(p, r)
      return
    }
    this.answered(p, r, msg)
  }

  // The answer's question must be the one we asked (RFC 5452 §9.1). The query was validated
  // when it arrived, so re-reading it cannot fail; it costs about 0.15 µs.
  private matches(p: PendingQuery, response: Buffer): boolean {
    return readQuery(p.query, this.scratch) === QUERY_OK && questionMatches(response, this.scratch)
  }

  // An answer from `r` to `p`'s try in flight: relayed, or (REFUSED, SERVFAIL, NOTIMP) kept as
  // the fallback while the next resolver is asked.
  private answered(p: PendingQuery, r: Resolver, msg: Buffer): void {
    const rcode = msg[3]! & 0x0f // a matching answer has a full header
    const user = p.origin !== null
    if (user) r.counters.observe(performance.now() - p.sentAt)
    if (failsOver(rcode)) {
      const name = rcodeLabel(rcode)
      if (user) r.counters.countError(name as 'REFUSED' | 'SERVFAIL' | 'NOTIMP')
      r.errorAnswer(name)
      p.lastError = Buffer.from(msg) // a copy: msg may live in a receive area the next batch reuses
      this.tryFailed(p, Date.now())
      return
    }
    r.answered(user ? 'answered a query' : 'answered a health probe')
    this.finish(p, msg)
  }

  private finish(p: PendingQuery, response: Buffer | null): void {
    p.done = true
    const origin = p.origin
    if (origin === null) {
      if (p.resolver !== null) p.resolver.probing = false
      return
    }
    this.waitingClients--
    if (response !== null) setId(response, p.clientId)
    origin.onAnswer(origin, p, response)
  }

  // A try ended without an answer to relay (timed out, refused, or an answer that fails over):
  // send the query again to the next resolver while the client's budget allows another try, else
  // the client gets the last error answer, or null (SERVFAIL) when there was none.
  private tryFailed(p: PendingQuery, now: number): void {
    if (p.origin === null || p.tries >= this.maxTries || now + (this.tryMs >> 1) > p.deadline) {
      this.finish(p, p.lastError)
      return
    }
    const next = this.pickResolver(p.resolver, p.earlier)
    if (next === null) this.finish(p, p.lastError)
    else if (p.viaTcp) this.sendTcp(p, next)
    else this.sendUdp(p, next, now)
  }

  private readonly find = (key: number): PendingQuery | undefined =>
    key < 0 ? this.tcp.find(key) : this.pool.socket(key)?.waiting[key % 65536]

  private readonly expired = (p: PendingQuery, key: number): void => {
    if (key < 0) this.tcp.abandon(p)
    else this.pool.release(p)
    const r = p.resolver
    if (p.origin !== null && r !== null) {
      r.counters.timeouts++
      this.metrics?.countUpstreamTimeout()
      r.down(`no answer within ${this.tryMs} ms`)
    }
    this.tryFailed(p, Date.now())
  }

  private sweep(): void {
    const now = Date.now()
    this.tries.sweep(now, this.find, this.expired)
    if (now - this.lastProbe >= this.probeMs) {
      this.lastProbe = now
      this.probe(now)
    }
    if (now - this.lastRotate >= this.rotateMs) {
      this.lastRotate = now
      for (const r of this.resolvers) this.pool.rotate(r, () => this.closed)
    }
    for (const r of this.resolvers) this.pool.reap(r, now, this.rotateMs * 16)
    if (this.removed.length > 0) {
      for (const r of this.removed) this.pool.reap(r, now, this.rotateMs * 16)
      this.removed = this.removed.filter((r) => r.retired.size > 0)
    }
  }

  // One probe at a time per down resolver, over UDP, answered or timed out after a try's share. A
  // resolver without sockets (unreachable) gets them opened again instead.
  private probe(now: number): void {
    for (const r of this.resolvers) {
      if (r.pool.length === 0) {
        if (!r.opening && !this.closed) {
          r.opening = true
          void this.pool.fill(r).finally(() => {
            r.opening = false
          })
        }
        continue
      }
      if (r.up || r.probing) continue
      r.probing = true
      const p = new PendingQuery(Buffer.from(PROBE_QUERY), 0, null)
      p.deadline = now + this.tryMs
      this.sendUdp(p, r, now)
    }
  }

  /** Fails every waiting query (its origin's onAnswer with null) and closes the sockets. */
  close(): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.sweeper)
    const waiting = [...this.tcp.drain(), ...this.pool.waiting()]
    this.pool.close([...this.resolvers, ...this.removed])
    this.tries.clear()
    for (const p of waiting) {
      if (p.done) continue
      p.tcp?.destroy()
      this.finish(p, null)
    }
  }
}
