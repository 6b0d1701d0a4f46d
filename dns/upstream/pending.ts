/*
 * A forwarded query in flight, and its origin: who asked, and who takes the answer. The origin is
 * the dispatcher's (the forwarder carries it unread and hands it back with the answer, as undici
 * hands each request's handler its response); the rest is the forwarder's bookkeeping.
 */
import type { Socket as TcpSocket } from 'node:net'
import type { QueryLogRecord } from '../../engine/querylog/index.js'
import type { Peer } from '../peer.js'
import type { Resolver } from './resolver.js'
import type { OutSocket } from './socket-pool.js'

/**
 * Called once per client query: the upstream answer with the client's ID restored, or null when
 * no resolver answered within the budget. `response` may live in a receive area the next batch
 * overwrites: use it (or copy it) before returning.
 */
export type UpstreamAnswerHandler = (origin: QueryOrigin, p: PendingQuery, response: Buffer | null) => void

/** Who is waiting for a forwarded query's answer. */
export interface QueryOrigin {
  /** Who asked, and how the answer goes back. */
  readonly peer: Peer
  /** Statistics record to complete, or null (statistics off). */
  readonly record: QueryLogRecord | null
  /** performance.now() when the front handed it over (the upstream latency metric). */
  readonly started: number
  /** Safe video: the client's own query (the forwarded one asks for `target`); null for a relayed query. */
  readonly original: Buffer | null
  /** Safe-video target asked for ('' for a relayed query). */
  readonly target: string
  readonly onAnswer: UpstreamAnswerHandler
  /** Seconds the answer's TTLs may last (a scheduled rule's next boundary), -1 for no cap. */
  readonly ttlCap: number
}

export class PendingQuery {
  /** The query as sent upstream (its ID is ours, not the client's). */
  readonly query: Buffer
  /** The client's ID, written back into the answer. */
  readonly clientId: number
  /** Null for the forwarder's own health probe (no client waits for it). */
  readonly origin: QueryOrigin | null
  /** Key of the try in flight: its socket's serial × 65536 + ID (UDP, >= 0), or a TCP try's key (< 0). */
  key = -1
  /** Serial of the try in flight: an expiry entry with another serial is stale. */
  trySerial = 0
  /** Date.now() when the client's budget is spent. */
  deadline = 0
  /** Tries sent so far. */
  tries = 0
  /** performance.now() when the try in flight left (the resolver's latency histogram). */
  sentAt = 0
  done = false
  viaTcp = false
  /** The client asked over TCP: a truncated UDP answer is asked again over TCP, not relayed. */
  streamClient = false
  /** The last error answer (REFUSED, SERVFAIL, NOTIMP) a resolver gave: the client's answer if no other resolver gives a better one. */
  lastError: Buffer | null = null
  /** The resolver of the try in flight, and of the try before it (the next try avoids both). */
  resolver: Resolver | null = null
  earlier: Resolver | null = null
  out: OutSocket | null = null
  tcp: TcpSocket | null = null

  constructor(query: Buffer, clientId: number, origin: QueryOrigin | null) {
    this.query = query
    this.clientId = clientId
    this.origin = origin
  }
}
