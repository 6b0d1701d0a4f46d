/*
 * One HTTP/2 request stream of ./connection.ts, as a DoH exchange's request and response
 * (../doh-exchange.ts DohRequest and DohResponse): the request's pseudo-headers and headers, its
 * body and end and the stream's close told to one listener (the exchange), and the response
 * written as one HEADERS and its DATA.
 *
 * Per request it is one object and the decoded field list: the headers become a record only when
 * asked for (a trusted proxy's X-Forwarded-For), the exchange is called through its methods (no
 * closure per request), and a DNS answer's header block is written from its two numbers
 * (./hpack.ts encodeDnsAnswer).
 */
import type { DohListener, DohRequest, DohResponse } from '../doh-exchange.js'
import { INITIAL_WINDOW } from './frames.js'
import { NO_LENGTH } from './request-check.js'

/** The client end of the stream's connection, read once per connection. */
export interface StreamPeer {
  readonly remoteAddress?: string
  readonly remotePort?: number
}

/** What a stream asks of its connection. */
export interface StreamConnection {
  readonly peer: StreamPeer
  respond(stream: H2Stream, status: number, headers: Record<string, string | number>, body: Buffer): void
  /** A 200 DNS answer: the first `len` bytes of `buf` (used before this returns), max-age `ttl`. */
  respondDns(stream: H2Stream, buf: Buffer, len: number, ttl: number): void
}

export class H2Stream implements DohRequest, DohResponse {
  readonly id: number
  readonly method: string | undefined
  readonly url: string | undefined
  readonly socket: StreamPeer
  /** Our DATA may still send this many bytes (the client's window for this stream). */
  sendWindow: number
  /** The client may still send this many bytes of DATA (we never raise it: a DoH body is at most 64 KiB). */
  recvWindow = INITIAL_WINDOW
  /** The client sent END_STREAM (or the stream was refused its body). */
  remoteClosed = false
  /** The request's content-length, or NO_LENGTH (./request-check.ts); its DATA octets so far. */
  contentLength = NO_LENGTH
  received = 0
  /** Its response refuses the body (413, 408): the client is asked to stop sending it. */
  stopBody = false
  /** The response is written (its last DATA frame may still wait for window). */
  responded = false
  /** The stream is gone: answered and ended, or reset, or its connection closed. */
  closed = false
  /** The response body not yet sent for lack of window, from `pendingAt`. */
  pending: Buffer | null = null
  pendingAt = 0
  /** `pending` is the stream's own copy (not a buffer the caller reuses). */
  owned = false
  /** The body given to end() is written (copied) at once, or copied when it must wait for window. */
  readonly copiesBody = true
  private readonly conn: StreamConnection
  /** The request's fields as decoded: name, value, name, value... */
  private readonly fields: string[]
  private record: Record<string, string> | null = null
  private status = 200
  private resHeaders: Record<string, string | number> = {}
  private listener: DohListener | null = null

  constructor(conn: StreamConnection, id: number, fields: string[], sendWindow: number) {
    this.conn = conn
    this.id = id
    this.fields = fields
    this.method = this.pseudo(':method')
    this.url = this.pseudo(':path')
    this.socket = conn.peer
    this.sendWindow = sendWindow
  }

  /** The request's headers (and pseudo-headers) as a record, a repeated name's values joined by ", ". */
  get headers(): Record<string, string> {
    if (this.record !== null) return this.record
    const r: Record<string, string> = {}
    const f = this.fields
    for (let i = 0; i < f.length; i += 2) {
      const prev = r[f[i]!]
      r[f[i]!] = prev === undefined ? f[i + 1]! : `${prev}, ${f[i + 1]!}`
    }
    this.record = r
    return r
  }

  /** One header's value (a repeated one's joined by ", "), read from the field list without the record. */
  header(name: string): string | undefined {
    const f = this.fields
    let v: string | undefined
    for (let i = 0; i < f.length; i += 2) if (f[i] === name) v = v === undefined ? f[i + 1] : `${v}, ${f[i + 1]!}`
    return v
  }

  // A pseudo-header's value: they come first and once each (./request-check.ts), so the scan stops
  // at the first match or the first regular field.
  private pseudo(name: string): string | undefined {
    const f = this.fields
    for (let i = 0; i < f.length && f[i]!.charCodeAt(0) === 0x3a; i += 2) if (f[i] === name) return f[i + 1]
    return undefined
  }

  on(event: 'data' | 'end' | 'close', fn: (chunk: Buffer) => void): this {
    // The DohRequest/DohResponse shape; the exchange uses listen() (one listener object, no closures).
    const l: DohListener = this.listener ?? { bodyChunk: () => {}, bodyEnd: () => {}, streamClosed: () => {} }
    if (event === 'data') this.listener = { ...l, bodyChunk: fn }
    else if (event === 'end') this.listener = { ...l, bodyEnd: fn as () => void }
    else this.listener = { ...l, streamClosed: fn as () => void }
    return this
  }

  listen(l: DohListener): void {
    this.listener = l
  }

  writeHead(status: number, headers: Record<string, string | number>): this {
    this.status = status
    this.resHeaders = headers
    return this
  }

  end(body?: Buffer | string): this {
    if (this.closed || this.responded) return this
    this.responded = true
    const b = body === undefined ? Buffer.alloc(0) : typeof body === 'string' ? Buffer.from(body) : body
    this.conn.respond(this, this.status, this.resHeaders, b)
    return this
  }

  answer(buf: Buffer, len: number, ttl: number): void {
    if (this.closed || this.responded) return
    this.responded = true
    this.conn.respondDns(this, buf, len, ttl)
  }

  /** A chunk of the request body (from the connection). */
  data(chunk: Buffer): void {
    if (!this.closed) this.listener?.bodyChunk(chunk)
  }

  /** The request body ended (from the connection). */
  ended(): void {
    this.remoteClosed = true
    if (!this.closed) this.listener?.bodyEnd()
  }

  /** The stream is gone (from the connection): nothing more is read or written. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.pending = null
    this.listener?.streamClosed()
  }
}
