/*
 * One HTTP/2 request stream of ./connection.ts, as a DoH exchange's request and response
 * (../doh-exchange.ts DohRequest and DohResponse): the request's pseudo-headers and headers, its
 * body as 'data' and 'end', and the response written as one HEADERS and its DATA.
 */
import type { DohRequest, DohResponse } from '../doh-exchange.js'
import { INITIAL_WINDOW } from './frames.js'

/** The client end of the stream's connection, read once per connection. */
export interface StreamPeer {
  readonly remoteAddress?: string
  readonly remotePort?: number
}

/** What a stream asks of its connection. */
export interface StreamConnection {
  readonly peer: StreamPeer
  respond(stream: H2Stream, status: number, headers: Record<string, string | number>, body: Buffer): void
}

export class H2Stream implements DohRequest, DohResponse {
  readonly id: number
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: Record<string, string>
  readonly socket: StreamPeer
  /** Our DATA may still send this many bytes (the client's window for this stream). */
  sendWindow: number
  /** The client may still send this many bytes of DATA (we never raise it: a DoH body is at most 64 KiB). */
  recvWindow = INITIAL_WINDOW
  /** The client sent END_STREAM (or the stream was refused its body). */
  remoteClosed = false
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
  private status = 200
  private resHeaders: Record<string, string | number> = {}
  private onData: ((chunk: Buffer) => void) | null = null
  private onEnd: (() => void) | null = null
  private onClose: (() => void) | null = null

  constructor(conn: StreamConnection, id: number, headers: Record<string, string>, sendWindow: number) {
    this.conn = conn
    this.id = id
    this.headers = headers
    this.method = headers[':method']
    this.url = headers[':path']
    this.socket = conn.peer
    this.sendWindow = sendWindow
  }

  on(event: 'data' | 'end' | 'close', fn: (chunk: Buffer) => void): this {
    if (event === 'data') this.onData = fn
    else if (event === 'end') this.onEnd = fn as () => void
    else this.onClose = fn as () => void
    return this
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

  /** A chunk of the request body (from the connection). */
  data(chunk: Buffer): void {
    if (!this.closed) this.onData?.(chunk)
  }

  /** The request body ended (from the connection). */
  ended(): void {
    this.remoteClosed = true
    if (!this.closed) this.onEnd?.()
  }

  /** The stream is gone (from the connection): nothing more is read or written. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.pending = null
    this.onClose?.()
  }
}
