/**
 * The front door to the management API (spec, Authentication). The `blockpage` role's HTTP listener asks
 * `isApiHost(Host)` for every request; requests for the API's host name go to `handle`, which applies the
 * ordered allow/deny rules of `api.access` (first match wins; the default lets only loopback in) and forwards
 * what they allow to the API daemon at `api.listen`. Everything else is the block page's business.
 *
 * Which address the rules judge: the socket peer, always, unless the peer is one of `api.trusted-proxies`
 * (a load balancer in front of this host). Then X-Forwarded-For is read from the right, skipping trusted
 * proxies, and the first address that is not one is the client: entries to its left were written by the
 * client itself and prove nothing. A header is never believed from an untrusted peer.
 *
 * Credentials are the API's business (api/auth.ts), checked after these rules: the door passes the
 * `Authorization` header on untouched and tells the API the client address it judged in
 * `X-Filterd-Client` (RELAYED_CLIENT_HEADER, overwriting any the client sent), so a request relayed
 * from outside never counts as a loopback caller there. The TLS listener (`blockpage.tls-listen`)
 * runs this same door, so API clients can use HTTPS and keep their secrets off the wire.
 *
 * Forwarding: node:http with a keep-alive agent. The adapter hands us a buffered request and sends a
 * buffered response (its bodies are bounded by the body limit), so the proxy copies bodies in one piece;
 * method, path, query, headers (minus hop-by-hop ones), status and body are kept. A daemon that is down or
 * fails mid-answer gives 502 with the JSON error body.
 *
 * @example
 * const door = createFrontDoor(config, logger)
 * server.route('*', '/*', async (req, res) => {
 *   if (door.isApiHost(req.header('host'))) await door.handle(req, res)
 *   else renderBlockPage(req, res)
 * })
 */
import { Agent, request, type IncomingMessage } from 'node:http'
import { StringDecoder } from 'node:string_decoder'
import type { Config } from '../engine/config/index.js'
import { parseHostPort } from '../engine/config/index.js'
import { FRONT_DOOR_ERRORS, type FrontDoorErrorCode, type HttpRequest, type HttpResponse } from '../engine/http/index.js'
import { auditLogger, type Logger } from '../engine/log/index.js'
import { compileAccessRules, RELAYED_CLIENT_HEADER } from '../engine/net/access.js'
import { cidrContains, ipBytes, normalizeIp, parseCidr, type Cidr } from '../engine/net/ip.js'

export interface FrontDoor {
  /** True when a Host header (port and trailing dot ignored, any case) names the API's host (`api.host`). */
  isApiHost (hostHeader: string | undefined): boolean
  /** The address the access rules judge for this request (see the module comment). */
  clientAddress (req: HttpRequest): string
  /** Applies the access rules, then forwards to the API daemon; always answers. */
  handle (req: HttpRequest, res: HttpResponse): Promise<void>
  /** Replaces the access rules (a config reload of `api.access`); the lines are valid (the config loader compiled them). */
  setAccess (lines: readonly string[]): void
  /** Drops the idle keep-alive connections to the API daemon. */
  close (): void
}

export interface FrontDoorOptions {
  /** Milliseconds before a forwarded request that got no answer is given up (502). Default 30 000. */
  timeoutMs?: number
}

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1); never forwarded. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'content-length'
])

/** Answers one of the front door's own errors, with the status its catalogue gives the code. */
function sendError (res: HttpResponse, code: FrontDoorErrorCode, message: string): void {
  res.json({ error: { code, message } }, FRONT_DOOR_ERRORS[code])
}

/** `Api.Example.` / `api.example:8080` / `[::1]:80` → the bare lower-case name or address. */
function hostName (header: string): string {
  let h = header.trim().toLowerCase()
  if (h.startsWith('[')) {
    const end = h.indexOf(']')
    return end < 0 ? h : h.slice(1, end)
  }
  const colon = h.indexOf(':')
  if (colon >= 0 && h.indexOf(':', colon + 1) < 0) h = h.slice(0, colon)
  return h.endsWith('.') ? h.slice(0, -1) : h
}

/** A listen address as something to connect to: the wildcard addresses mean "this host". */
function connectHost (host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::') return '::1'
  return host
}

/** The methods whose requests the api role audits (api/auth.ts). */
const WRITE_METHODS: ReadonlySet<string> = new Set(['PUT', 'POST', 'DELETE', 'PATCH'])

export function createFrontDoor (config: Readonly<Pick<Config, 'api'>>, logger: Logger, options: FrontDoorOptions = {}): FrontDoor {
  const apiHost = hostName(config.api.host)
  let rules = compileAccessRules(config.api.access)
  const audit = auditLogger(logger)
  const trusted: Cidr[] = config.api['trusted-proxies'].map((text) => {
    const cidr = parseCidr(text)
    if (cidr === undefined) throw new Error(`api.trusted-proxies: "${text}" is not an address or prefix`)
    return cidr
  })
  const target = parseHostPort(config.api.listen)
  const targetHost = connectHost(target.host)
  const timeoutMs = options.timeoutMs ?? 30_000
  const agent = new Agent({ keepAlive: true, maxSockets: 256 })

  const isTrusted = (address: string): boolean => {
    if (trusted.length === 0) return false
    const bytes = ipBytes(address)
    return bytes !== undefined && trusted.some((c) => cidrContains(c, bytes))
  }

  const clientAddress = (req: HttpRequest): string => {
    const peer = req.remoteAddress
    if (!isTrusted(peer)) return peer
    const xff = req.header('x-forwarded-for')
    if (xff === undefined) return peer
    const hops = xff.split(',')
    let client = peer
    for (let i = hops.length - 1; i >= 0; i--) {
      const text = hops[i]!.trim()
      const address = normalizeIp(text)
      // Garbage where an address should be: the chain cannot be followed further; judge the garbage
      // itself, which no rule allows.
      if (address === undefined) return text
      client = address
      if (!isTrusted(address)) return address
    }
    return client
  }

  const forward = (req: HttpRequest, body: Buffer, client: string): Promise<IncomingMessage> => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value
    const xff = req.header('x-forwarded-for')
    headers['x-forwarded-for'] = xff === undefined || !isTrusted(req.remoteAddress) ? client : `${xff}, ${req.remoteAddress}`
    // The address the rules judged, for the API's own check (api/auth.ts): written here whatever the client sent.
    headers[RELAYED_CLIENT_HEADER] = client
    if (body.length > 0 || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') headers['content-length'] = String(body.length)
    return new Promise((resolve, reject) => {
      const out = request({
        agent,
        host: targetHost,
        port: target.port,
        method: req.method,
        path: req.query === '' ? req.path : `${req.path}?${req.query}`,
        headers,
        timeout: timeoutMs
      }, resolve)
      out.on('timeout', () => { out.destroy(new Error(`no answer within ${timeoutMs} ms`)) })
      out.on('error', reject)
      out.end(body)
    })
  }

  const isEventStream = (answer: IncomingMessage): boolean => /^text\/event-stream/i.test(answer.headers['content-type'] ?? '')

  const readAll = async (msg: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = []
    for await (const chunk of msg) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  }

  const copyHeaders = (answer: IncomingMessage, res: HttpResponse): void => {
    res.status(answer.statusCode ?? 502)
    const raw = answer.rawHeaders
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) res.header(raw[i]!, raw[i + 1]!)
    }
  }

  /**
   * The console's live log (text/event-stream) is passed on as it comes instead of read whole: chunk by
   * chunk, pausing the upstream while the client's socket is full (so a slow client holds no more here
   * than there), with the request timeout off (the stream is meant to stay open), and the upstream closed
   * when the client leaves.
   */
  const relayStream = async (answer: IncomingMessage, res: HttpResponse): Promise<void> => {
    answer.socket.setTimeout(0)
    const decoder = new StringDecoder('utf8')
    // The first chunk opens the answer (uWS has no empty write); no chunk may pass before the relay below.
    const first = await new Promise<Buffer | null>((resolve, reject) => {
      answer.once('data', (chunk: Buffer) => { answer.pause(); resolve(chunk) })
      answer.once('end', () => { resolve(null) })
      answer.once('error', reject)
    })
    copyHeaders(answer, res)
    if (first === null) {
      res.send('')
      return
    }
    const stream = res.stream(decoder.write(first))
    stream.onDrain(() => { answer.resume() })
    stream.onClose(() => { answer.destroy() })
    answer.on('data', (chunk: Buffer) => { if (!stream.write(decoder.write(chunk))) answer.pause() })
    answer.on('end', () => { stream.end() })
    answer.on('error', () => { stream.end() })
    if (stream.closed) answer.destroy()
    else answer.resume()
  }

  return {
    isApiHost (hostHeader) {
      return hostHeader !== undefined && hostName(hostHeader) === apiHost
    },
    clientAddress,
    setAccess (lines) { rules = compileAccessRules(lines) },
    async handle (req, res) {
      const client = clientAddress(req)
      if (!rules.allows(client)) {
        if (WRITE_METHODS.has(req.method)) {
          // The api daemon never sees this write: its audit line is written here, in the block page's log,
          // with the api role's fields (docs/api.md, "Audit log"), whatever blockpage.log-level says.
          audit.info({ audit: 'api', who: '-', source: client, peer: req.remoteAddress, method: req.method, path: req.path, status: 403, by: 'front-door' }, 'management API write refused by api.access')
        } else {
          logger.info({ client, peer: req.remoteAddress, method: req.method, path: req.path }, 'management API request denied by api.access')
        }
        sendError(res, 'API_FORBIDDEN', 'access to the management API is not allowed from this address')
        return
      }
      const body = await req.body()
      let answer: IncomingMessage
      let payload: Buffer
      try {
        answer = await forward(req, body, client)
        if (isEventStream(answer)) {
          await relayStream(answer, res)
          return
        }
        payload = await readAll(answer)
      } catch (err) {
        logger.warn({ err, target: config.api.listen }, 'management API daemon unreachable')
        sendError(res, 'API_UNAVAILABLE', 'the management API is not available')
        return
      }
      copyHeaders(answer, res)
      res.send(payload)
    },
    close () {
      agent.destroy()
    }
  }
}
