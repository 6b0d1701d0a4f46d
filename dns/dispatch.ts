/*
 * Batching and dispatch: from a query and its Peer to the answer, whatever front it came from.
 *
 * `inline` judges on this thread, synchronously, with no promise, closure or async frame on the
 * way (docs/conventions.md, "Hot paths" 3). `pool` collects the packets of one event-loop turn (or `batch-size`) into
 * one Piscina task (engine/pool). Both paths share `act()` afterwards: answer (a blocked name's
 * answer is the query patched in place), forward (the client's own Buffer with the ID
 * rewritten), safe video, or drop.
 */
import type { Logger } from '../engine/log/index.js'
import type { ClientIdMemory } from '../engine/store/index.js'
import type { DnsMetrics } from './metrics.js'
import type { JudgePool, BatchOutput } from '../engine/pool/index.js'
import type { QueryLogRecord, QueryLogSink } from '../engine/querylog/index.js'
import {
  EDE_NO_REACHABLE_AUTHORITY,
  QUERY_OK,
  capTtls,
  QueryScratch,
  RCODE_NXDOMAIN,
  RCODE_REFUSED,
  RCODE_SERVFAIL,
  ANSWER_BUFFER_SIZE,
  rcodeOf,
  readId,
  readQuery,
  setId,
  writeErrorAnswer
} from '../engine/wire/index.js'
import {
  JUDGE_ANSWER,
  JUDGE_FORWARD,
  JUDGE_LOCAL,
  JUDGE_SAFEVIDEO,
  buildRecord,
  type Judge
} from '../engine/judge/index.js'
import type { Peer } from './peer.js'
import { SafeVideo, EDE_TIMEOUT } from './safe-video.js'
import { PendingQuery, type Forwarder, type QueryOrigin } from './upstream.js'
import type { RateLimiter } from './rate-limit.js'
import type { DnstapTap } from './dnstap-sink.js'
import { UdpSizes } from './udp-size.js'

const QTYPE_ANY = 255

// The QTYPE of a query whose name is plain labels (no pointer: a query has none), else -1. Cheap
// enough for every UDP query; the full check is readQuery's, for the few that say ANY.
function qtypeOf(msg: Buffer): number {
  let i = 12
  const end = msg.length
  while (i < end) {
    const len = msg[i]! // i < end
    if (len === 0) return i + 3 <= end ? (msg[i + 1]! << 8) | msg[i + 2]! : -1
    if (len > 63) return -1
    i += len + 1
  }
  return -1
}

/** A judged query and what to do with it (the judge's kind: answer, forward, safe video, drop). */
interface Decision {
  readonly kind: number
  readonly msg: Buffer
  /** The answer for JUDGE_ANSWER (`answerLength` bytes of it). */
  readonly answer: Buffer
  readonly answerLength: number
  /** Safe-video target ('' otherwise). */
  readonly target: string
  readonly peer: Peer
  readonly record: QueryLogRecord | null
  /** `msg` stays valid after the call (else the peer's channel copies it when it must). */
  readonly owned: boolean
  /** Seconds a forwarded answer's TTLs may last (a scheduled rule's next boundary), -1 for no cap. */
  readonly ttlCap: number
  /** A JUDGE_ANSWER with an error RCODE is a refused query (not an RPZ feed's NXDOMAIN). */
  readonly rejected: boolean
}

class BatchItem {
  readonly msg: Buffer
  readonly peer: Peer
  readonly time: number
  /** Where flush() put the query in the task's input. */
  offset = 0
  constructor(msg: Buffer, peer: Peer, time: number) {
    this.msg = msg
    this.peer = peer
    this.time = time
  }
}

export interface DispatcherOptions {
  /** Inline judging; null with a pool. */
  judge: Judge | null
  pool: JudgePool | null
  batchSize: number
  sink: QueryLogSink
  metrics: DnsMetrics
  logger: Logger
  /** Where forwarded queries go; their answers come back through `onUpstream`. */
  forwarder: Forwarder
  /** Per-client rate limit (null: off) and what an over-limit query gets. */
  limiter?: RateLimiter | null
  limitAction?: 'refuse' | 'drop'
  /** ANY over UDP is answered empty with TC set (the client asks again over TCP): no amplification. */
  truncateAnyOverUdp?: boolean
  /** dnstap output (`proxy.dnstap`), or null: fed from the same records as the statistics sink. */
  tap?: DnstapTap | null
  /** The UDP size advertised upstream at most (`proxy.upstream-edns-size`; default 1232). */
  upstreamEdnsSize?: number
  /** Where block answers to client-ID queries are remembered for the block page (null: no DoT/DoH). */
  clientIds?: ClientIdMemory | null
}

export class Dispatcher {
  private readonly judge: Judge | null
  private readonly pool: JudgePool | null
  private readonly batchSize: number
  private readonly sink: QueryLogSink
  private readonly metrics: DnsMetrics
  private readonly logger: Logger
  private limiter: RateLimiter | null
  private limitDrop: boolean
  private readonly truncateAny: boolean
  private readonly tap: DnstapTap | null
  /** Build a record per query: statistics or dnstap want it. */
  private readonly records: boolean
  private readonly safeVideo = new SafeVideo()
  private readonly sizes: UdpSizes
  private readonly scratchOut = Buffer.allocUnsafe(ANSWER_BUFFER_SIZE)
  private readonly replyScratch = new QueryScratch()
  private readonly forwarder: Forwarder
  private readonly clientIds: ClientIdMemory | null
  private batch: BatchItem[] = []
  private batchScheduled = false
  private closed = false

  constructor(o: DispatcherOptions) {
    this.judge = o.judge
    this.pool = o.pool
    this.batchSize = o.batchSize
    this.sink = o.sink
    this.metrics = o.metrics
    this.logger = o.logger
    this.forwarder = o.forwarder
    this.limiter = o.limiter ?? null
    this.limitDrop = o.limitAction === 'drop'
    this.truncateAny = o.truncateAnyOverUdp ?? false
    this.tap = o.tap ?? null
    this.records = this.sink.enabled || this.tap !== null
    this.sizes = new UdpSizes(o.upstreamEdnsSize)
    this.clientIds = o.clientIds ?? null
  }

  /** A config reload's `proxy.rate-limit*` keys: the new limiter (null: off) replaces the old one. */
  setRateLimit(limiter: RateLimiter | null, action: 'refuse' | 'drop'): void {
    this.limiter?.close()
    this.limiter = limiter
    this.limitDrop = action === 'drop'
  }

  /** One query from a front. */
  readonly submit = (msg: Buffer, peer: Peer): void => {
    if (this.limiter !== null && !this.limiter.allow(peer.address, Date.now())) {
      this.overLimit(msg, peer)
      return
    }
    if (this.truncateAny && !peer.channel.isStream && qtypeOf(msg) === QTYPE_ANY && this.truncated(msg, peer)) return
    if (this.judge === null) {
      // Native batches end with endBatch(), which sends the task before the receive area is
      // reused: their queries are copied once, into the task's buffer. Others are queued as they are.
      this.enqueue(new BatchItem(msg, peer, this.records ? Date.now() : 0))
      return
    }
    try {
      const j = this.judge
      const kind = j.judge(msg, peer.address, this.scratchOut, peer.clientId, peer.channel.isStream)
      const rec = kind !== 0 && this.records ? buildRecord(j, Date.now()) : null
      this.act({
        kind,
        msg,
        answer: this.scratchOut,
        answerLength: j.answerLength,
        target: kind === JUDGE_SAFEVIDEO ? j.verdict.target : '',
        peer,
        record: rec,
        owned: false,
        ttlCap: j.verdict.ttlCap,
        rejected: j.isRejected
      })
    } catch (err) {
      this.lastResort(err, msg, peer)
    }
  }

  // A query over the client's rate: REFUSED (a well-formed query only), or nothing.
  private overLimit(msg: Buffer, peer: Peer): void {
    const q = this.replyScratch
    if (this.limitDrop || readQuery(msg, q) !== QUERY_OK) {
      this.metrics.countQuery('drop', -1)
      peer.channel.skip(peer)
      return
    }
    this.metrics.countQuery('refused', RCODE_REFUSED)
    this.reply(this.scratchOut, writeErrorAnswer(msg, q, RCODE_REFUSED, this.scratchOut), peer, true)
  }

  // ANY over UDP (RFC 8482 allows a minimal answer): an empty NOERROR answer with TC set, no
  // larger than the query, so a forged source address cannot turn us into an amplifier. False
  // when the query is malformed (the judge answers it as any other).
  private truncated(msg: Buffer, peer: Peer): boolean {
    const q = this.replyScratch
    if (readQuery(msg, q) !== QUERY_OK) return false
    const len = writeErrorAnswer(msg, q, 0, this.scratchOut)
    this.scratchOut[2] = this.scratchOut[2]! | 0x02 // TC
    this.metrics.countQuery('truncated', 0)
    this.reply(this.scratchOut, len, peer, true)
    return true
  }

  /**
   * The end of a batch of queries that live in a receive area the next batch overwrites: with a
   * pool, their task leaves now (the copy into the task's buffer is their only copy).
   */
  endBatch(): void {
    if (this.pool !== null) this.flush()
  }

  // ---- pool dispatch ---------------------------------------------------------------------------

  private enqueue(item: BatchItem): void {
    this.batch.push(item)
    if (this.batch.length >= this.batchSize) {
      this.flush()
    } else if (!this.batchScheduled) {
      this.batchScheduled = true
      // setImmediate runs after this turn's I/O callbacks: one task per event-loop turn.
      setImmediate(() => {
        this.batchScheduled = false
        this.flush()
      })
    }
  }

  private flush(): void {
    const items = this.batch
    if (items.length === 0 || this.pool === null) return
    this.batch = []
    let total = 0
    for (const it of items) total += it.msg.length
    const bytes = new ArrayBuffer(total)
    const view = Buffer.from(bytes)
    const spans = new Uint32Array(2 * items.length)
    const sources: string[] = new Array<string>(items.length)
    // Client IDs beside the sources, only when a query of the batch has one (plain DNS never does).
    let clientIds: Array<string | null> | null = null
    let off = 0
    for (let i = 0; i < items.length; i++) {
      const it = items[i]! // i < length
      it.msg.copy(view, off)
      it.offset = off
      spans[2 * i] = off
      spans[2 * i + 1] = it.msg.length
      sources[i] = it.peer.address
      if (it.peer.clientId !== null)
        (clientIds ??= new Array<string | null>(items.length).fill(null))[i] = it.peer.clientId
      off += it.msg.length
    }
    this.metrics.setPoolQueueDepth(this.pool.queueSize)
    this.pool.run({ bytes, spans, sources, clientIds }).then(
      (out) => this.onBatch(items, out),
      (err: unknown) => this.onBatch(items, null, err)
    )
  }

  private onBatch(items: BatchItem[], out: BatchOutput | null, err?: unknown): void {
    if (this.closed) return
    if (out === null || out.error !== null) {
      this.logger.error({ err: err ?? out?.error }, 'dns pool task failed')
      const input = out === null ? null : Buffer.from(out.input)
      for (const it of items) this.lastResort(err ?? out?.error, this.itemQuery(it, input), it.peer)
      return
    }
    const answers = Buffer.from(out.bytes)
    const input = Buffer.from(out.input)
    for (let i = 0; i < items.length; i++) {
      const it = items[i]! // i < items.length == out.kinds.length
      const kind = out.kinds[i]!
      let answer = this.scratchOut
      let len = 0
      if (kind === JUDGE_ANSWER || kind === JUDGE_LOCAL) {
        len = out.spans[2 * i + 1]!
        answer = answers.subarray(out.spans[2 * i], out.spans[2 * i]! + len)
      }
      const rec = out.records?.[i] ?? null
      if (rec !== null) rec.time = it.time
      // The query as the worker saw it, in the moved-back input: owned by this batch, never reused.
      const msg = this.itemQuery(it, input)
      try {
        this.act({
          kind,
          msg,
          answer,
          answerLength: len,
          target: out.targets[i] ?? '',
          peer: it.peer,
          record: rec,
          owned: true,
          ttlCap: out.ttlCaps?.[i] ?? -1,
          // The pool's workers have no RPZ feeds: an error RCODE is a refused query.
          rejected: true
        })
      } catch (e) {
        this.lastResort(e, msg, it.peer)
      }
    }
  }

  // The item's query bytes in the task's input (laid out by flush()). When the task was rejected
  // its input is gone with the worker: the item's own bytes are all there is (for a native query
  // the receive area may hold a later datagram by then; the SERVFAIL then misses its client).
  private itemQuery(it: BatchItem, input: Buffer | null): Buffer {
    if (input === null || input.length === 0) return it.peer.channel.own(it.msg)
    return input.subarray(it.offset, it.offset + it.msg.length)
  }

  // ---- acting on a decision --------------------------------------------------------------------

  private act(d: Decision): void {
    const { peer, record } = d
    switch (d.kind) {
      case JUDGE_ANSWER: {
        // A local answer: an error answer to a bad query, or a block (safe search answers the same way).
        const rcode = d.answerLength >= 4 ? d.answer[3]! & 0x0f : RCODE_SERVFAIL
        this.metrics.countQuery(
          rcode !== 0 && d.rejected ? 'malformed' : record?.reason === 'safesearch' ? 'safesearch' : 'block',
          rcode
        )
        const remembered =
          rcode === 0 && peer.clientId !== null && this.clientIds !== null
            ? this.rememberClientId(this.clientIds, d.msg, peer.address, peer.clientId)
            : null
        if (remembered === null) {
          this.reply(d.answer, d.answerLength, peer, true)
        } else {
          // The browser asks the block page as soon as it has the answer: it leaves once the entry is committed.
          const answer = Buffer.from(d.answer.subarray(0, d.answerLength))
          const send = (): void => this.reply(answer, answer.length, peer, false)
          remembered.then(send, (err: unknown) => {
            this.logger.warn({ err }, 'dns: cannot write the client-ID memory; the block page judges by address')
            send()
          })
        }
        if (record !== null) this.logged(record, d.msg, -1, d.answer, d.answerLength, peer)
        return
      }
      case JUDGE_LOCAL: {
        // Answered before policy: the canary, DDR, an unknown client ID refused. Not a block.
        const rcode = d.answerLength >= 4 ? d.answer[3]! & 0x0f : RCODE_SERVFAIL
        this.metrics.countQuery('other', rcode)
        this.reply(d.answer, d.answerLength, peer, true)
        if (record !== null) this.logged(record, d.msg, -1, d.answer, d.answerLength, peer)
        return
      }
      case JUDGE_FORWARD: {
        const origin: QueryOrigin = {
          peer,
          record,
          started: performance.now(),
          original: null,
          target: '',
          onAnswer: this.onUpstream,
          ttlCap: d.ttlCap
        }
        const p = new PendingQuery(d.owned ? d.msg : peer.channel.own(d.msg), readId(d.msg), origin)
        if (!this.mayForward(p, peer)) return
        this.sizes.prepare(p.query, peer) // the client's UDP limit; the EDNS size upstream capped
        if (peer.channel.isStream) this.forwarder.forwardTcp(p)
        else this.forwarder.forwardUdp(p)
        return
      }
      case JUDGE_SAFEVIDEO: {
        const original = d.owned ? d.msg : peer.channel.own(d.msg)
        const started = this.safeVideo.begin(original, d.target, this.scratchOut)
        if (typeof started === 'number') {
          this.reply(this.scratchOut, started, peer, true)
          if (record !== null) this.logged(record, d.msg, -1, this.scratchOut, started, peer)
          return
        }
        const origin: QueryOrigin = {
          peer,
          record,
          started: performance.now(),
          original,
          target: d.target,
          onAnswer: this.onUpstream,
          ttlCap: -1
        }
        const p = new PendingQuery(started, readId(d.msg), origin)
        if (this.mayForward(p, peer)) this.forwarder.forwardUdp(p)
        return
      }
      default:
        this.metrics.countQuery('drop', -1)
        peer.channel.skip(peer)
    }
  }

  // The query's channel keeps it to withdraw (a DoH stream), or says its client is gone already (a
  // query judged by the pool while its stream was reset): then it is not sent, and counted withdrawn.
  private mayForward(p: PendingQuery, peer: Peer): boolean {
    if (peer.channel.forwarding === undefined || peer.channel.forwarding(p, this.withdraw)) return true
    this.metrics.upstreamWithdrawn++
    return false
  }

  /** Takes a forwarded query whose client went away out of the forwarder's pending table. */
  readonly withdraw = (p: PendingQuery): void => {
    if (this.forwarder.withdraw(p)) this.metrics.upstreamWithdrawn++
  }

  /** The forwarder's answer (or null: no resolver answered within the budget) for a query this dispatcher sent. */
  readonly onUpstream = (origin: QueryOrigin, p: PendingQuery, response: Buffer | null): void => {
    if (this.closed) return
    const { peer, record, original } = origin
    let rcode: number
    let sent: Buffer = this.scratchOut
    let sentLength: number
    // Tries that timed out are counted by the forwarder (filterd_dns_upstream_timeouts_total).
    if (response !== null) this.metrics.observeUpstream(performance.now() - origin.started)
    if (original !== null) {
      const [len, rc] = this.safeVideo.finish(original, origin.target, response, this.scratchOut, peer)
      rcode = rc
      sentLength = len
      this.reply(this.scratchOut, len, peer, true)
    } else if (response === null) {
      rcode = RCODE_SERVFAIL
      setId(p.query, p.clientId)
      const q = this.replyScratch
      const ok = readQuery(p.query, q) === QUERY_OK
      const len = writeErrorAnswer(
        p.query,
        ok ? q : null,
        RCODE_SERVFAIL,
        this.scratchOut,
        EDE_NO_REACHABLE_AUTHORITY,
        EDE_TIMEOUT
      )
      sentLength = len
      this.reply(this.scratchOut, len, peer, true)
    } else {
      rcode = rcodeOf(response)
      if (origin.ttlCap >= 0) capTtls(response, response.length, origin.ttlCap)
      sentLength = this.relay(p, response, peer)
      if (sentLength === response.length) sent = response
    }
    this.metrics.countQuery(original !== null ? 'safevideo' : 'forward', rcode)
    if (record !== null) {
      record.rcode = rcode
      record.nxdomain = rcode === RCODE_NXDOMAIN
      this.logged(record, original ?? p.query, original === null ? p.clientId : -1, sent, sentLength, peer)
    }
  }

  // A block answer to a query naming a client ID: the block page will judge this address's request for
  // the name as that ID's user (engine/store/client-id-memory.ts). Slow path: client-ID block answers only.
  private rememberClientId(
    memory: ClientIdMemory,
    msg: Buffer,
    address: string,
    clientId: string
  ): Promise<unknown> | null {
    const q = this.replyScratch
    if (readQuery(msg, q) !== QUERY_OK || q.nameLength === 0) return null
    return memory.remember(address, q.nameBytes.toString('latin1', 0, q.nameLength), clientId)
  }

  // A query's final record: to the statistics sink and to dnstap (with the query and the answer sent).
  private logged(
    rec: QueryLogRecord,
    query: Buffer,
    queryId: number,
    answer: Buffer,
    answerLength: number,
    peer: Peer
  ): void {
    if (this.sink.enabled) this.sink.write(rec)
    if (this.tap !== null) this.tap.write(rec, query, queryId, answer, answerLength, peer)
  }

  // An upstream answer larger than a UDP client takes goes out truncated (TC): it asks again over TCP.
  // Returns the length sent: the response's own, or that of the truncated answer written to scratchOut.
  private relay(p: PendingQuery, response: Buffer, peer: Peer): number {
    if (peer.channel.isStream || response.length <= peer.udpLimit) {
      this.reply(response, response.length, peer, false)
      return response.length
    }
    this.metrics.udpTruncated++
    const len = this.sizes.truncate(p.query, p.clientId, response, this.scratchOut)
    this.reply(this.scratchOut, len, peer, true)
    return len
  }

  private reply(buf: Buffer, len: number, peer: Peer, copy: boolean): void {
    if (this.closed && !peer.channel.isStream) return
    peer.channel.send(peer, buf, len, copy)
  }

  // The one last-resort catch of the front loop: count, log, answer SERVFAIL.
  private lastResort(err: unknown, msg: Buffer, peer: Peer): void {
    this.logger.error({ err }, 'dns: unexpected error while answering; sent SERVFAIL')
    try {
      const q = this.replyScratch
      const ok = readQuery(msg, q) === QUERY_OK
      const len = writeErrorAnswer(msg, ok ? q : null, RCODE_SERVFAIL, this.scratchOut)
      this.reply(this.scratchOut, len, peer, true)
    } catch {
      peer.channel.skip(peer)
    }
  }

  /** Stops answering UDP and pool batches (TCP answers still go out while connections close). */
  close(): void {
    this.closed = true
  }
}
