/*
 * One HTTP/2 stream as a DoH exchange's request and response (./doh-exchange.ts DohRequest and
 * DohResponse), on node:http2's core API: the stream's own headers, 'data' and 'end', and
 * `respond()` + `end()`. Node's compatibility request and response would wrap the same stream in two
 * more streams per query; this is a handful of fields. docs/performance.md, "Encrypted DNS".
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2'
import type { DohRequest, DohResponse } from './doh-exchange.js'

/** The client end of the stream's connection, read once per connection. */
export interface StreamPeer {
  readonly remoteAddress?: string
  readonly remotePort?: number
}

export class StreamExchange implements DohRequest, DohResponse {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly socket: StreamPeer
  private readonly stream: ServerHttp2Stream

  constructor(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, socket: StreamPeer) {
    this.stream = stream
    this.headers = headers
    this.method = headers[':method']
    this.url = headers[':path']
    this.socket = socket
  }

  on(event: 'data' | 'end' | 'close', fn: (chunk: Buffer) => void): this {
    this.stream.on(event, fn)
    return this
  }

  writeHead(status: number, headers: Record<string, string | number>): this {
    // The client may have reset the stream, or its connection gone, after the query left.
    if (this.stream.destroyed || this.stream.headersSent) return this
    this.stream.respond({ ':status': status, ...headers })
    return this
  }

  end(body?: Buffer | string): this {
    if (this.stream.destroyed) return this
    // A request body nobody reads (GET, or a POST refused before its body) would hold the stream open.
    if (this.stream.readableFlowing !== true) this.stream.resume()
    this.stream.end(body)
    return this
  }
}
