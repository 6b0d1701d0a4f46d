/**
 * Test helper (not a test): one HTTP/1.1 request on a fresh connection, with the path sent byte for
 * byte (fetch would normalise it) and an optional source address (the roles key policy and limits
 * on the peer), answering status, headers and the body as text.
 */
import { request } from 'node:http'
import { connect } from 'node:net'
import type { HttpRequest } from '../http/index.js'

export interface RawHttpResponse {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

export interface RawHttpRequest {
  readonly port: number
  readonly method?: string
  readonly path?: string
  readonly headers?: Record<string, string>
  /** Source address to connect from (a loopback alias such as 127.0.0.2). */
  readonly localAddress?: string
  readonly body?: string
}

export function httpRequest(o: RawHttpRequest): Promise<RawHttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: o.port,
        method: o.method ?? 'GET',
        path: o.path ?? '/',
        headers: o.headers ?? {},
        agent: false,
        ...(o.localAddress === undefined ? {} : { localAddress: o.localAddress })
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') })
        })
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    req.end(o.body)
  })
}

/**
 * Writes `bytes` on a fresh connection and answers everything the server sends until it closes the
 * connection: for requests the server must answer and then close (HTTP/1.0, a bad Host).
 */
export function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => {
      resolve(Buffer.concat(chunks).toString('latin1'))
    })
    socket.write(bytes)
  })
}

/**
 * A request object with only a peer address and headers (names in lower case), for the functions that judge
 * who is asking (the API's and the front door's client address) without a server.
 */
export function fakeRequest(remoteAddress: string, headers: Record<string, string> = {}): HttpRequest {
  return { remoteAddress, header: (n: string) => headers[n.toLowerCase()] } as unknown as HttpRequest
}
