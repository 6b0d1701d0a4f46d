/*
 * Batching and dispatch: from a query and its Peer to the answer, whatever front it came from.
 *
 * `inline` judges on this thread, synchronously, with no promise, closure or async frame on the
 * way (STYLE.md E.3). `pool` collects the packets of one event-loop turn (or `batch-size`) into
 * one Piscina task (engine/pool). Both paths share `act()` afterwards: answer (a blocked name's
 * answer is the query patched in place), forward (the client's own Buffer with the ID
 * rewritten), safe video, or drop.
 */
import type { Logger } from '../engine/log/index.js'
import type { DnsMetrics } from '../engine/metrics/index.js'
import type { JudgePool, BatchOutput } from '../engine/pool/index.js'
import type { QueryLogRecord, QueryLogSink } from '../engine/querylog/index.js'
import {
  EDE_NO_REACHABLE_AUTHORITY, QUERY_OK, QueryScratch, RCODE_NXDOMAIN, RCODE_REFUSED, RCODE_SERVFAIL, kAnswerBufferSize,
  rcodeOf, readId, readQuery, setId, writeErrorAnswer
} from '../engine/wire/index.js'
import { JUDGE_ANSWER, JUDGE_FORWARD, JUDGE_SAFEVIDEO, buildRecord, type Judge } from '../engine/judge/index.js'
import type { Peer } from './peer.js'
import { SafeVideo, kEdeTimeout } from './safe-video.js'
import { PendingQuery, type Forwarder } from './upstream.js'
import type { RateLimiter } from './rate-limit.js'

const QTYPE_ANY = 255

// The QTYPE of a query whose name is plain labels (no pointer: a query has none), else -1. Cheap
// enough for every UDP query; the full check is readQuery's, for the few that say ANY.
function qtypeOf (msg: Buffer): number {
  let i = 12
  const end = msg.length
  while (i < end) {
    const len = msg[i]!   // i < end
    if (len === 0) return i + 3 <= end ? (msg[i + 1]! << 8) | msg[i + 2]! : -1
    if (len > 63) return -1
    i += len + 1
  }
  return -1
}

class BatchItem {
  readonly msg: Buffer
  readonly peer: Peer
  readonly time: number
  /** Where flush() put the query in the task's input. */
  offset = 0
  constructor (msg: Buffer, peer: Peer, time: number) {
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
  /** Per-client rate limit (null: off) and what an over-limit query gets. */
  limiter?: RateLimiter | null
  limitAction?: 'refuse' | 'drop'
  /** ANY over UDP is answered empty with TC set (the client asks again over TCP): no amplification. */
  truncateAnyOverUdp?: boolean
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
  private readonly safeVideo = new SafeVideo()
  private readonly scratchOut = Buffer.allocUnsafe(kAnswerBufferSize)
  private readonly replyScratch = new QueryScratch()
  private forwarder: Forwarder | null = null
  private batch: BatchItem[] = []
  private batchScheduled = false
  private closed = false

  constructor (o: DispatcherOptions) {
    this.judge = o.judge
    this.pool = o.pool
    this.batchSize = o.batchSize
    this.sink = o.sink
    this.metrics = o.metrics
    this.logger = o.logger
    this.limiter = o.limiter ?? null
    this.limitDrop = o.limitAction === 'drop'
    this.truncateAny = o.truncateAnyOverUdp ?? false
  }

  /** A config reload's `proxy.rate-limit*` keys: the new limiter (null: off) replaces the old one. */
  setRateLimit (limiter: RateLimiter | null, action: 'refuse' | 'drop'): void {
    this.limiter?.close()
    this.limiter = limiter
    this.limitDrop = action === 'drop'
  }

  /** The forwarder, whose answers come back through `onUpstream` (set before any front listens). */
  setForwarder (f: Forwarder): void {
    this.forwarder = f
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
      this.enqueue(new BatchItem(msg, peer, this.sink.enabled ? Date.now() : 0))
      return
    }
    try {
      const j = this.judge
      const kind = j.judge(msg, peer.address, this.scratchOut)
      const rec = kind !== 0 && this.sink.enabled ? buildRecord(j, Date.now()) : null
      this.act(kind, msg, this.scratchOut, j.answerLength, kind === JUDGE_SAFEVIDEO ? j.verdict.target : '', peer, rec, false)
    } catch (err) {
      this.lastResort(err, msg, peer)
    }
  }

  // A query over the client's rate: REFUSED (a well-formed query only), or nothing.
  private overLimit (msg: Buffer, peer: Peer): void {
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
  private truncated (msg: Buffer, peer: Peer): boolean {
    const q = this.replyScratch
    if (readQuery(msg, q) !== QUERY_OK) return false
    const len = writeErrorAnswer(msg, q, 0, this.scratchOut)
    this.scratchOut[2] = this.scratchOut[2]! | 0x02   // TC
    this.metrics.countQuery('truncated', 0)
    this.reply(this.scratchOut, len, peer, true)
    return true
  }

  /**
   * The end of a batch of queries that live in a receive area the next batch overwrites: with a
   * pool, their task leaves now (the copy into the task's buffer is their only copy).
   */
  endBatch (): void {
    if (this.pool !== null) this.flush()
  }

  // ---- pool dispatch ---------------------------------------------------------------------------

  private enqueue (item: BatchItem): void {
    this.batch.push(item)
    if (this.batch.length >= this.batchSize) {
      this.flush()
    } else if (!this.batchScheduled) {
      this.batchScheduled = true
      // setImmediate runs after this turn's I/O callbacks: one task per event-loop turn.
      setImmediate(() => { this.batchScheduled = false; this.flush() })
    }
  }

  private flush (): void {
    const items = this.batch
    if (items.length === 0 || this.pool === null) return
    this.batch = []
    let total = 0
    for (const it of items) total += it.msg.length
    const bytes = new ArrayBuffer(total)
    const view = Buffer.from(bytes)
    const spans = new Uint32Array(2 * items.length)
    const sources: string[] = new Array<string>(items.length)
    let off = 0
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!   // i < length
      it.msg.copy(view, off)
      it.offset = off
      spans[2 * i] = off
      spans[2 * i + 1] = it.msg.length
      sources[i] = it.peer.address
      off += it.msg.length
    }
    this.metrics.setPoolQueueDepth(this.pool.queueSize)
    this.pool.run({ bytes, spans, sources }).then(
      (out) => this.onBatch(items, out),
      (err: unknown) => this.onBatch(items, null, err)
    )
  }

  private onBatch (items: BatchItem[], out: BatchOutput | null, err?: unknown): void {
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
      const it = items[i]!                // i < items.length == out.kinds.length
      const kind = out.kinds[i]!
      let answer = this.scratchOut
      let len = 0
      if (kind === JUDGE_ANSWER) {
        len = out.spans[2 * i + 1]!
        answer = answers.subarray(out.spans[2 * i], out.spans[2 * i]! + len)
      }
      const rec = out.records?.[i] ?? null
      if (rec !== null) rec.time = it.time
      // The query as the worker saw it, in the moved-back input: owned by this batch, never reused.
      const msg = this.itemQuery(it, input)
      try {
        this.act(kind, msg, answer, len, out.targets[i] ?? '', it.peer, rec, true)
      } catch (e) {
        this.lastResort(e, msg, it.peer)
      }
    }
  }

  // The item's query bytes in the task's input (laid out by flush()). When the task was rejected
  // its input is gone with the worker: the item's own bytes are all there is (for a native query
  // the receive area may hold a later datagram by then; the SERVFAIL then misses its client).
  private itemQuery (it: BatchItem, input: Buffer | null): Buffer {
    if (input === null || input.length === 0) return it.peer.channel.own(it.msg)
    return input.subarray(it.offset, it.offset + it.msg.length)
  }

  // ---- acting on a decision --------------------------------------------------------------------

  // `owned`: msg stays valid after this call (else the peer's channel copies it when it must).
  private act (kind: number, msg: Buffer, answer: Buffer, answerLength: number, target: string, peer: Peer, rec: QueryLogRecord | null, owned: boolean): void {
    switch (kind) {
      case JUDGE_ANSWER: {
        // A local answer: an error answer to a bad query, or a block (safe search answers the same way).
        const rcode = answerLength >= 4 ? answer[3]! & 0x0f : RCODE_SERVFAIL
        this.metrics.countQuery(rcode !== 0 ? 'malformed' : rec?.reason === 'safesearch' ? 'safesearch' : 'block', rcode)
        this.reply(answer, answerLength, peer, true)
        if (rec !== null) this.sink.write(rec)
        return
      }
      case JUDGE_FORWARD: {
        const p = new PendingQuery(owned ? msg : peer.channel.own(msg))
        p.started = performance.now()
        p.clientId = readId(msg)
        p.peer = peer
        p.record = rec
        if (peer.channel.isStream) this.forwarder!.forwardTcp(p)   // forwarder is set before listening
        else this.forwarder!.forwardUdp(p)
        return
      }
      case JUDGE_SAFEVIDEO: {
        const started = this.safeVideo.begin(owned ? msg : peer.channel.own(msg), target, this.scratchOut)
        if (typeof started === 'number') {
          this.reply(this.scratchOut, started, peer, true)
          if (rec !== null) this.sink.write(rec)
          return
        }
        started.peer = peer
        started.record = rec
        this.forwarder!.forwardUdp(started)
        return
      }
      default:
        this.metrics.countQuery('drop', -1)
        peer.channel.skip(peer)
    }
  }

  /** The forwarder's answer (or null: timeout, failure) for a query this dispatcher sent. */
  readonly onUpstream = (p: PendingQuery, response: Buffer | null): void => {
    if (this.closed) return
    const peer = p.peer!   // every PendingQuery gets its peer before it is forwarded
    const rec = p.record as QueryLogRecord | null
    let rcode: number
    if (response === null) this.metrics.countUpstreamTimeout()
    else this.metrics.observeUpstream(performance.now() - p.started)
    if (p.original !== null) {
      const [len, rc] = this.safeVideo.finish(p as PendingQuery & { original: Buffer }, response, this.scratchOut, peer)
      rcode = rc
      this.reply(this.scratchOut, len, peer, true)
    } else if (response === null) {
      rcode = RCODE_SERVFAIL
      setId(p.query, p.clientId)
      const q = this.replyScratch
      const ok = readQuery(p.query, q) === QUERY_OK
      const len = writeErrorAnswer(p.query, ok ? q : null, RCODE_SERVFAIL, this.scratchOut, EDE_NO_REACHABLE_AUTHORITY, kEdeTimeout)
      this.reply(this.scratchOut, len, peer, true)
    } else {
      rcode = rcodeOf(response)
      this.reply(response, response.length, peer, false)
    }
    this.metrics.countQuery(p.original !== null ? 'safevideo' : 'forward', rcode)
    if (rec !== null) {
      rec.rcode = rcode
      rec.nxdomain = rcode === RCODE_NXDOMAIN
      this.sink.write(rec)
    }
  }

  private reply (buf: Buffer, len: number, peer: Peer, copy: boolean): void {
    if (this.closed && !peer.channel.isStream) return
    peer.channel.send(peer, buf, len, copy)
  }

  // The one last-resort catch of the front loop: count, log, answer SERVFAIL.
  private lastResort (err: unknown, msg: Buffer, peer: Peer): void {
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
  close (): void {
    this.closed = true
  }
}
