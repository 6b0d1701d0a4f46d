// Test helpers of the encrypted transports (DoT, DoH): a blocking world with a certificate, a server
// with every encrypted listener on a free port, and small DoT and DoH clients on node:tls and node:http2.
import type { TestContext } from 'node:test'
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { connect as http2Connect, constants as h2c, type ClientHttp2Session } from 'node:http2'
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../../engine/categories/index.js'
import { writeTestCertificate } from '../../engine/testing/tls.js'
import type { StubResolverOptions } from '../../engine/upstream-stub/index.js'
import { FrameReader, frame } from '../../engine/wire/index.js'
import type { DnsServer } from '../server.js'
import { addUser, server, world, type World } from './harness.js'
import type { ConfigOptions } from '../../engine/testing/dns.js'

/** The TLS server name of the test listeners; a client ID is the label before it. */
export const SERVER_NAME = 'dns.test'

export interface EncryptedWorld extends World {
  cert: string
  key: string
}

/**
 * A world where casino.example is blocked for 127.0.0.1 (user alice), with a certificate for SERVER_NAME.
 * The user kid holds the client ID `kid1` and blocks social.example too, which alice does not.
 */
export async function encryptedWorld(t: TestContext, stub: StubResolverOptions = {}): Promise<EncryptedWorld> {
  const cats = { 'casino.example': [CATEGORY.GAMBLING], 'social.example': [CATEGORY.SOCIAL_NETWORKS] }
  const w = await world(t, { cats, stub })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  await addUser(w.store, {
    name: 'kid',
    client_ids: ['kid1'],
    filter: [CATEGORY.GAMBLING, CATEGORY.SOCIAL_NETWORKS]
  })
  const { cert, key } = writeTestCertificate(w.dir, SERVER_NAME)
  return { ...w, cert, key }
}

/** A server with one DoT, one DoH and one plain-HTTP DoH listener on free loopback ports. */
export async function encryptedServer(
  t: TestContext,
  w: EncryptedWorld,
  proxy: Record<string, unknown> = {},
  o: ConfigOptions = {}
): Promise<DnsServer> {
  return await server(t, w, {
    ...o,
    proxy: {
      'dot-listen': ['127.0.0.1:0'],
      'doh-listen': ['127.0.0.1:0'],
      'doh-http-listen': ['127.0.0.1:0'],
      'tls-cert': w.cert,
      'tls-key': w.key,
      'server-name': SERVER_NAME,
      ...proxy
    }
  })
}

/** A DoT connection (certificate not checked: the test's own) that collects the answers it reads. */
export async function dotConnect(port: number, o: ConnectionOptions = {}): Promise<DotClient> {
  const sock = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['dot'], ...o })
  sock.on('error', () => {})
  const client = new DotClient(sock)
  await once(sock, 'secureConnect')
  return client
}

export class DotClient {
  readonly sock: TLSSocket
  readonly answers: dnsPacket.DecodedPacket[] = []
  /** The last TLS session the server gave (for resumption). */
  session: Buffer | undefined
  private readonly reader = new FrameReader(65535)
  private waiters: Array<() => void> = []
  constructor(sock: TLSSocket) {
    this.sock = sock
    sock.on('session', (session: Buffer) => {
      this.session = session
    })
    sock.on('data', (chunk: Buffer) => {
      this.reader.push(chunk)
      for (let m = this.reader.read(); m !== null; m = this.reader.read())
        this.answers.push(dnsPacket.decode(Buffer.from(m)))
      for (const w of this.waiters) w()
    })
  }

  send(msgs: Buffer[]): void {
    this.sock.write(Buffer.concat(msgs.map((m) => frame(m))))
  }

  /** Resolves when `n` answers have come (rejects after `ms`). */
  async until(n: number, ms = 10_000): Promise<dnsPacket.DecodedPacket[]> {
    const deadline = Date.now() + ms
    while (this.answers.length < n) {
      if (Date.now() > deadline || this.sock.destroyed) throw new Error(`${this.answers.length} of ${n} answers`)
      await new Promise<void>((resolve) => {
        this.waiters = [resolve]
        setTimeout(resolve, 50)
      })
    }
    return this.answers
  }

  close(): void {
    this.sock.destroy()
  }
}

export interface HttpAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** An HTTP/2 session to a DoH listener (certificate not checked). */
export function h2(t: TestContext, port: number): ClientHttp2Session {
  const s = http2Connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
  s.on('error', () => {})
  t.after(() => s.destroy())
  return s
}

/** One request on `session`; its status, headers and body. */
export async function h2Request(
  session: ClientHttp2Session,
  headers: Record<string, string | number>,
  body?: Buffer
): Promise<HttpAnswer> {
  const req = session.request(headers, { endStream: body === undefined })
  if (body !== undefined) req.end(body)
  const [resHeaders] = (await once(req, 'response')) as [Record<string, string | string[] | undefined>]
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return { status: Number(resHeaders[':status']), headers: resHeaders, body: Buffer.concat(chunks) }
}

/** A DoH POST of `msg` to `path`. */
export async function dohPost(session: ClientHttp2Session, msg: Buffer, path = '/dns-query'): Promise<HttpAnswer> {
  return await h2Request(
    session,
    { ':method': 'POST', ':path': path, 'content-type': 'application/dns-message', 'content-length': msg.length },
    msg
  )
}

/** Runs a command; its standard output, or undefined when it could not run (not installed). */
export async function run(
  cmd: string,
  args: string[],
  ms = 15_000
): Promise<{ code: number; out: string } | undefined> {
  return await new Promise((resolve) => {
    execFile(cmd, args, { timeout: ms }, (err, stdout, stderr) => {
      const code = (err as { code?: unknown } | null)?.code
      if (code === 'ENOENT') resolve(undefined)
      else resolve({ code: typeof code === 'number' ? code : err === null ? 0 : 1, out: stdout + stderr })
    })
  })
}

/** Skips the test (or fails it in CI, which installs every client) when `cmd` is not installed. */
export async function needsTool(t: TestContext, cmd: string, pkg: string): Promise<boolean> {
  const r = await run('sh', ['-c', `command -v ${cmd}`])
  if (r !== undefined && r.code === 0) return true
  if (process.env.CI !== undefined && process.env.CI !== '') throw new Error(`${cmd} is missing (Debian: ${pkg})`)
  t.skip(`${cmd} is not installed (Debian: ${pkg})`)
  return false
}

/**
 * HTTP/2 rapid reset (CVE-2023-44487): opens up to `max` DoH POST streams of `msg` on `session` and resets
 * each as soon as it has its ID (one closed before that is never sent), yielding to the event loop every
 * `batch` streams so the resets reach the server in batches; stops when the server closes the session.
 * Returns the streams opened.
 */
export async function rapidReset(
  session: ClientHttp2Session,
  msg: Buffer,
  max: number,
  batch: number
): Promise<number> {
  let sent = 0
  for (; sent < max && !session.closed && !session.destroyed; sent++) {
    const req = session.request({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message' })
    req.on('error', () => {})
    req.end(msg)
    const cancel = (): void => req.close(h2c.NGHTTP2_CANCEL)
    if (req.pending) req.once('ready', cancel)
    else cancel()
    if (sent % batch === batch - 1) await new Promise((r) => setImmediate(r))
  }
  return sent
}
