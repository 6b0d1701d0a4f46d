/**
 * The front door's proxy to the API daemon (blockpage/front-door.ts decides what reaches it): node:http with
 * a keep-alive agent. The adapter hands us a buffered request and sends a buffered response (its bodies are
 * bounded by the body limit), so the relay copies bodies in one piece; method, path, query, headers (minus
 * hop-by-hop ones), status and body are kept. The console's live log (text/event-stream) is passed on as it
 * comes instead (`relayStream`).
 */
import { Agent, request, type IncomingMessage } from 'node:http'
import { StringDecoder } from 'node:string_decoder'
import type { HostPort } from '../engine/config/index.js'
import type { HttpRequest, HttpResponse } from '../engine/http/index.js'
import { RELAYED_CLIENT_HEADER } from '../engine/net/index.js'

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1); never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length'
])

/** A listen address as something to connect to: the wildcard addresses mean "this host". */
function connectHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::') return '::1'
  return host
}

/** Where the relay sends requests, and how the client's address travels with them. */
export interface RelayTarget {
  /** `api.listen`. */
  readonly listen: HostPort
  /** Milliseconds before a request that got no answer is given up. */
  readonly timeoutMs: number
}

/** What the front door knows of the request it relays. */
export interface RelayedRequest {
  readonly req: HttpRequest
  readonly body: Buffer
  /** The client address the access rules judged. */
  readonly client: string
  /** The peer is a trusted proxy: its X-Forwarded-For is kept, with the peer appended. */
  readonly fromTrustedProxy: boolean
}

export class ApiRelay {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 })
  readonly #host: string
  readonly #target: RelayTarget

  constructor(target: RelayTarget) {
    this.#target = target
    this.#host = connectHost(target.listen.host)
  }

  /** Forwards the request and answers with what the daemon answered; rejects when it cannot be reached. */
  async relay(r: RelayedRequest, res: HttpResponse): Promise<void> {
    const answer = await this.#forward(r)
    if (/^text\/event-stream/i.test(answer.headers['content-type'] ?? '')) {
      await relayStream(answer, res)
      return
    }
    const payload = await readAll(answer)
    copyHeaders(answer, res)
    res.send(payload)
  }

  /** Drops the idle keep-alive connections to the daemon. */
  close(): void {
    this.#agent.destroy()
  }

  #forward({ req, body, client, fromTrustedProxy }: RelayedRequest): Promise<IncomingMessage> {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value
    const xff = req.header('x-forwarded-for')
    headers['x-forwarded-for'] = xff === undefined || !fromTrustedProxy ? client : `${xff}, ${req.remoteAddress}`
    // The address the rules judged, for the API's own check (api/auth.ts): written here whatever the client sent.
    headers[RELAYED_CLIENT_HEADER] = client
    if (body.length > 0 || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH')
      headers['content-length'] = String(body.length)
    const { timeoutMs } = this.#target
    return new Promise((resolve, reject) => {
      const out = request(
        {
          agent: this.#agent,
          host: this.#host,
          port: this.#target.listen.port,
          method: req.method,
          path: req.query === '' ? req.path : `${req.path}?${req.query}`,
          headers,
          timeout: timeoutMs
        },
        resolve
      )
      out.on('timeout', () => {
        out.destroy(new Error(`no answer within ${timeoutMs} ms`))
      })
      out.on('error', reject)
      out.end(body)
    })
  }
}

async function readAll(msg: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of msg) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

function copyHeaders(answer: IncomingMessage, res: HttpResponse): void {
  res.status(answer.statusCode ?? 502)
  const raw = answer.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) res.header(raw[i]!, raw[i + 1]!)
  }
}

/** The first chunk of an answer, with the answer paused after it; null when it ended without one. */
function firstChunk(answer: IncomingMessage): Promise<Buffer | null> {
  return new Promise<Buffer | null>((resolve, reject) => {
    answer.once('data', (chunk: Buffer) => {
      answer.pause()
      resolve(chunk)
    })
    answer.once('end', () => {
      resolve(null)
    })
    answer.once('error', reject)
  })
}

/**
 * The console's live log (text/event-stream) is passed on as it comes instead of read whole: chunk by
 * chunk, pausing the upstream while the client's socket is full (so a slow client holds no more here
 * than there), with the request timeout off (the stream is meant to stay open), and the upstream closed
 * when the client leaves.
 */
async function relayStream(answer: IncomingMessage, res: HttpResponse): Promise<void> {
  answer.socket.setTimeout(0)
  const decoder = new StringDecoder('utf8')
  // The first chunk opens the answer (uWS has no empty write); no chunk may pass before the relay below.
  const first = await firstChunk(answer)
  copyHeaders(answer, res)
  if (first === null) {
    res.send('')
    return
  }
  const stream = res.stream(decoder.write(first))
  stream.onDrain(() => {
    answer.resume()
  })
  stream.onClose(() => {
    answer.destroy()
  })
  answer.on('data', (chunk: Buffer) => {
    if (!stream.write(decoder.write(chunk))) answer.pause()
  })
  answer.on('end', () => {
    stream.end()
  })
  answer.on('error', () => {
    stream.end()
  })
  if (stream.closed) answer.destroy()
  else answer.resume()
}
