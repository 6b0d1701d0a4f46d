/**
 * A local HTTP server that serves one list the way a test wants it: a body with an ETag and
 * Last-Modified (answering 304 to a matching conditional request), an error status, a body cut
 * short, or headers and then nothing. It records the conditional headers each request carried.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Cleanup } from './temp.js'

export type ServeMode =
  | { kind: 'list'; body: string; etag?: string; lastModified?: string; chunked?: boolean }
  | { kind: 'status'; status: number }
  | { kind: 'truncated'; body: string; announced: number }
  | { kind: 'stall' }

export interface ListServer {
  readonly url: string
  mode: ServeMode
  /** The If-None-Match and If-Modified-Since of every request so far. */
  readonly requests: Array<{ ifNoneMatch?: string; ifModifiedSince?: string }>
  /** The Connection header of each request, in order. */
  readonly connections: Array<string | undefined>
}

function serveList(req: IncomingMessage, res: ServerResponse, m: Extract<ServeMode, { kind: 'list' }>): void {
  const etagHit = m.etag !== undefined && req.headers['if-none-match'] === m.etag
  const dateHit = m.lastModified !== undefined && req.headers['if-modified-since'] === m.lastModified
  const headers: Record<string, string> = { 'content-type': 'text/plain' }
  if (m.etag !== undefined) headers.etag = m.etag
  if (m.lastModified !== undefined) headers['last-modified'] = m.lastModified
  if (etagHit || (m.etag === undefined && dateHit)) {
    res.writeHead(304, headers).end()
    return
  }
  if (m.chunked === true) {
    res.writeHead(200, headers)
    res.write(m.body.slice(0, 10))
    res.end(m.body.slice(10))
    return
  }
  res.writeHead(200, { ...headers, 'content-length': String(Buffer.byteLength(m.body)) }).end(m.body)
}

export async function startListServer(t: Cleanup, mode: ServeMode): Promise<ListServer> {
  const requests: ListServer['requests'] = []
  const connections: ListServer['connections'] = []
  const state = { mode }
  const server = createServer((req, res) => {
    connections.push(req.headers.connection)
    requests.push({
      ...(req.headers['if-none-match'] === undefined ? {} : { ifNoneMatch: req.headers['if-none-match'] }),
      ...(req.headers['if-modified-since'] === undefined ? {} : { ifModifiedSince: req.headers['if-modified-since'] })
    })
    const m = state.mode
    if (m.kind === 'list') serveList(req, res, m)
    else if (m.kind === 'status') res.writeHead(m.status).end('error page')
    else if (m.kind === 'truncated') {
      res.writeHead(200, { 'content-length': String(m.announced) })
      res.write(m.body, () => res.socket?.destroy())
    } else res.writeHead(200, { 'content-type': 'text/plain' }).write('slow.example\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/list.txt`,
    requests,
    connections,
    get mode() {
      return state.mode
    },
    set mode(m: ServeMode) {
      state.mode = m
    }
  }
}
