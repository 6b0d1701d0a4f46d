/*
 * One HTTP/2 stream as a DoH exchange's request and response (./doh-exchange.ts DohRequest and
 * DohResponse), on node:http2's core API: the stream's own headers, 'data' and 'end', and
 * `respond()` + `end()`. Node's compatibility request and response would wrap the same stream in two
 * more streams per query; this is a handful of fields. docs/performance.md, "Encrypted DNS".
 */
import { constants as h2, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2'
import type { DohRequest, DohResponse } from './doh-exchange.js'

/** The client end of the stream's connection, read once per connection. */
export interface StreamPeer {
  readonly remoteAddress?: string
  readonly remotePort?: number
}

/** What the front wants to hear of one stream: that its client reset it before its answer. */
export interface StreamOwner {
  readonly peer: StreamPeer
  onReset(): void
}

const NOOP = (): void => {}

export class StreamExchange implements DohRequest, DohResponse {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly socket: StreamPeer
  private readonly stream: ServerHttp2Stream
  private readonly owner: StreamOwner
  private onClosed: (() => void) | null = null

  constructor(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, owner: StreamOwner) {
    this.stream = stream
    this.headers = headers
    this.method = headers[':method']
    this.url = headers[':path']
    this.socket = owner.peer
    this.owner = owner
    // One 'close' listener per stream for both the exchange and the reset count, and a shared no-op
    // for 'error' (a reset stream emits one; the close that follows is what counts).
    stream.on('error', NOOP)
    stream.once('close', this.closed)
  }

  on(event: 'data' | 'end' | 'close', fn: (chunk: Buffer) => void): this {
    if (event === 'close') this.onClosed = fn as () => void
    else this.stream.on(event, fn)
    return this
  }

  writeHead(status: number, headers: Record<string, string | number>): this {
    // The client may have reset the stream, or its connection gone, after the query left.
    if (this.stream.destroyed || this.stream.headersSent) return this
    headers[':status'] = status
    this.stream.respond(headers)
    return this
  }

  end(body?: Buffer | string): this {
    if (this.stream.destroyed) return this
    // A request body nobody reads (GET, or a POST refused before its body) would hold the stream open.
    if (this.stream.readableFlowing !== true) this.stream.resume()
    this.stream.end(body)
    return this
  }

  private readonly closed = (): void => {
    const s = this.stream
    if (s.rstCode !== h2.NGHTTP2_NO_ERROR && !s.headersSent) this.owner.onReset()
    this.onClosed?.()
  }
}
