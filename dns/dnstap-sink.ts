/*
 * `proxy.dnstap`: every query this front process answers, with its answer and filterd's decision,
 * as one dnstap CLIENT_RESPONSE frame to a collector (engine/dnstap; docs/dns.md, "dnstap").
 * The dispatcher calls `write` where the query's statistics record is final (our own answer
 * sent, or the upstream's relayed); encoding is a copy of both messages into the writer's chunk,
 * and the writer sends chunks on the next event-loop turn, dropping (and counting) what a slow or
 * absent collector has not taken once its bounded queue is full. Each front process (node:cluster
 * child) has its own connection, as Unbound's threads do.
 */
import { hostname } from 'node:os'
import type { Config } from '../engine/config/index.js'
import { EngineError } from '../engine/errors.js'
import type { Logger } from '../engine/log/index.js'
import type { QueryLogRecord } from '../engine/querylog/index.js'
import {
  DnstapEncoder,
  DnstapEvent,
  FrameStreamWriter,
  PROTOCOL_TCP,
  PROTOCOL_UDP,
  fillPolicy,
  parseDnstapTarget
} from '../engine/dnstap/index.js'
import type { Peer } from './peer.js'

/** Written into Dnstap.version. */
const VERSION = 'filterd'

export class DnstapTap {
  private readonly writer: FrameStreamWriter
  private readonly encoder: DnstapEncoder
  private readonly event = new DnstapEvent()
  private readonly logger: Logger
  private failed = false

  constructor(writer: FrameStreamWriter, identity: string, logger: Logger) {
    this.writer = writer
    this.encoder = new DnstapEncoder(writer, { identity, version: VERSION })
    this.logger = logger
  }

  /** Frames handed to the collector, and frames dropped (queue full, collector slow or away). */
  get counts(): { frames: number; dropped: number } {
    return { frames: this.writer.sentFrames, dropped: this.writer.droppedFrames }
  }

  /**
   * One answered query. `query`: the client's query bytes (`queryId`: the client's ID when those
   * bytes carry the upstream's, else -1); `answer[0..answerLength)`: what the client got.
   */
  write(rec: QueryLogRecord, query: Buffer, queryId: number, answer: Buffer, answerLength: number, peer: Peer): void {
    const e = this.event
    e.protocol = peer.channel.isStream ? PROTOCOL_TCP : PROTOCOL_UDP
    e.address = peer.address
    e.port = peer.port
    e.queryTimeMs = rec.time
    e.responseTimeMs = Date.now()
    e.query = query
    e.queryId = queryId
    e.response = answer
    e.responseLength = answerLength
    fillPolicy(e, rec, answer, answerLength)
    e.extra = rec.clientId === null || rec.clientId === undefined ? '' : 'client-id=' + rec.clientId
    try {
      this.encoder.write(e)
    } catch (err) {
      // A bug in the encoder must not cost the client its answer: log once, carry on without the frame.
      if (!this.failed) this.logger.error({ err }, 'dnstap: cannot encode a message; skipped')
      this.failed = true
    }
    e.query = e.response = EMPTY
  }

  async close(): Promise<void> {
    await this.writer.close()
  }
}

const EMPTY = Buffer.alloc(0)

/** The tap of one front process when `proxy.dnstap` is set (connecting in the background), else null. */
export function createDnstapTap(config: Readonly<Config>, logger: Logger): DnstapTap | null {
  const text = config.proxy.dnstap
  if (text === undefined) return null
  const parsed = parseDnstapTarget(text)
  if ('problem' in parsed) throw new EngineError('ENGINE_CONFIG_INVALID', `proxy.dnstap: ${parsed.problem}`)
  const target = parsed.target
  const writer = new FrameStreamWriter({ target, queueBytes: config.proxy['dnstap-queue'], logger })
  writer.start()
  return new DnstapTap(writer, config.proxy['dnstap-identity'] ?? hostname(), logger)
}
