/**
 * The node:http (or node:https) implementation: the fallback where the uWS addon does not load, and the
 * reference the conformance suite was first written against. Node writes `Connection` (and `Keep-Alive`),
 * `Date` and `Content-Length` itself and knows HTTP/1.0 keep-alive rules, so this file mostly translates.
 */
import { readFileSync } from 'node:fs'
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttps } from 'node:https'
import type { AddressInfo } from 'node:net'
import { normalizeAddress } from './address.js'
import { errorBody } from './errors.js'
import {
  BodyCollector,
  Request,
  Response,
  abortedError,
  addHeaderField,
  answerTooLarge,
  dispatch,
  type DispatchOptions,
  type Transport,
  type TransportStream
} from './core.js'

const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i

export interface NodeServerConfig extends DispatchOptions {
  readonly tls: { cert: string; key: string } | undefined
}

class NodeTransport implements Transport {
  readonly res: ServerResponse
  constructor(res: ServerResponse) {
    this.res = res
  }

  write(r: Response, body: string | Buffer): void {
    const res = this.res
    res.statusCode = r.statusCode
    const h = r.headerList
    for (let i = 0; i < h.length; i += 2) res.appendHeader(h[i]!, h[i + 1]!)
    // Node decides keep-alive from the request; it only needs telling when the app or the adapter wants close.
    if (!r.keepAlive) res.setHeader('Connection', 'close')
    const code = r.statusCode
    if (code === 204 || code === 304 || (code >= 100 && code < 200)) {
      res.end()
    } else if (r.isHead) {
      res.setHeader('Content-Length', r.bodyLength)
      res.end()
    } else {
      res.setHeader('Content-Length', r.bodyLength)
      res.end(body)
    }
  }

  openStream(r: Response, first: string, onDrain: () => void): TransportStream {
    const res = this.res
    res.statusCode = r.statusCode
    const h = r.headerList
    for (let i = 0; i < h.length; i += 2) res.appendHeader(h[i]!, h[i + 1]!)
    if (!r.keepAlive) res.setHeader('Connection', 'close')
    res.on('drain', onDrain)
    // No Content-Length: node sends the body chunked (HTTP/1.1) or until close (HTTP/1.0).
    res.write(first)
    return {
      write: (chunk) => res.write(chunk),
      end: () => {
        res.end()
      }
    }
  }
}

/**
 * A request target's path, query and, for the absolute form (RFC 9112 §3.2.2, as proxies send it),
 * its authority, which then is the Host: the request routes by its path.
 */
function splitTarget(target: string): { path: string; query: string; authority: string | undefined } {
  let url = target
  let authority: string | undefined
  if (url.charCodeAt(0) !== 47 /* / */) {
    const m = ABSOLUTE_FORM.exec(url)
    if (m !== null) {
      authority = m[1]!
      url = url.slice(m[0].length)
      if (url === '' || url.charCodeAt(0) === 63 /* ? */) url = '/' + url
    }
  }
  const q = url.indexOf('?')
  return { path: q === -1 ? url : url.slice(0, q), query: q === -1 ? '' : url.slice(q + 1), authority }
}

export class NodeServer {
  readonly impl = 'node' as const
  readonly #server: Server
  readonly #cfg: NodeServerConfig

  constructor(cfg: NodeServerConfig) {
    this.#cfg = cfg
    const listener = (req: IncomingMessage, res: ServerResponse): void => {
      this.#onRequest(req, res)
    }
    // The Host rule is checked in #onRequest, to answer with the adapter's JSON error body.
    this.#server =
      cfg.tls === undefined
        ? createHttp({ requireHostHeader: false }, listener)
        : createHttps(
            { cert: readFileSync(cfg.tls.cert), key: readFileSync(cfg.tls.key), requireHostHeader: false },
            listener
          )
  }

  #onRequest(nreq: IncomingMessage, nres: ServerResponse): void {
    const cfg = this.#cfg
    const raw = nreq.rawHeaders
    // RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0; anything else is 400 (and the
    // connection closes, as the request's framing is not to be trusted). node would accept two.
    let hosts = 0
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++
    if (hosts > 1 || (hosts === 0 && nreq.httpVersion !== '1.0')) {
      const res = new Response(new NodeTransport(nres), nreq.method === 'HEAD', true)
      res.closeAfter()
      res.sendError(
        400,
        errorBody('HTTP_BAD_HOST', hosts === 0 ? 'the Host header field is missing' : 'more than one Host header field')
      )
      nreq.resume()
      return
    }
    const { path, query, authority } = splitTarget(nreq.url ?? '/')
    // From the raw list, by the one rule both implementations share (node's own `headers` joins
    // cookies with '; ' and keeps set-cookie as an array).
    const headers: Record<string, string> = {}
    for (let i = 0; i + 1 < raw.length; i += 2) addHeaderField(headers, raw[i]!.toLowerCase(), raw[i + 1]!)
    if (authority !== undefined && authority !== '') headers.host = authority
    const method = (nreq.method ?? 'GET').toUpperCase()
    const res = new Response(new NodeTransport(nres), method === 'HEAD', true)
    const limit = cfg.bodyLimit
    const from = { query, headers, remote: normalizeAddress(nreq.socket.remoteAddress) }

    // GET and HEAD bodies are dropped unread, as the uWS implementation does (see uws.ts).
    if (method === 'GET' || method === 'HEAD') {
      nreq.resume()
      nres.on('close', () => {
        if (!nres.writableFinished) res.aborted = true
      })
      dispatch(cfg, new Request(method, path, from, BodyCollector.EMPTY), res)
      return
    }

    const collector = new BodyCollector(limit, () => {
      answerTooLarge(res, limit)
    })
    this.#readBody(nreq, nres, res, new Request(method, path, from, collector))
  }

  /** Reads a request's body into its collector (eagerly, as uWS must), then dispatches it. */
  #readBody(nreq: IncomingMessage, nres: ServerResponse, res: Response, req: Request): void {
    const cfg = this.#cfg
    const limit = cfg.bodyLimit
    const collector = req.bodyCollector
    nres.on('close', () => {
      if (!nres.writableFinished) {
        res.aborted = true
        collector.fail(abortedError())
      }
    })

    const declared = req.header('content-length')
    if (declared !== undefined && Number(declared) > limit) {
      answerTooLarge(res, limit)
      return
    }
    // Read eagerly, like uWS must, so both implementations answer 413 at the same point.
    nreq.on('data', (chunk: Buffer) => {
      collector.push(chunk, false)
    })
    nreq.on('end', () => {
      collector.end()
    })
    nreq.on('error', () => {
      collector.fail(abortedError())
    })
    nreq.on('close', () => {
      if (!nreq.complete) collector.fail(abortedError())
    })

    dispatch(cfg, req, res)
  }

  listen(host: string, port: number): Promise<{ port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(err)
      }
      this.#server.once('error', onError)
      this.#server.listen(port, host, () => {
        this.#server.off('error', onError)
        resolve({ port: (this.#server.address() as AddressInfo).port })
      })
    })
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.#server.listening) {
        this.#server.closeAllConnections()
        resolve()
        return
      }
      this.#server.close(() => {
        resolve()
      })
      // close() alone waits for keep-alive connections to time out; these are dropped now.
      this.#server.closeAllConnections()
    })
  }
}
