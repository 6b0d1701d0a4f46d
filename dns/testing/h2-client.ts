// Test helpers (not a test) of the DoH front's HTTP/2 server (../h2/): a DoH front on a free port
// answering every query itself (or holding them), and a hand-made HTTP/2 client over TLS that sends
// any frame, valid or not, and keeps every frame the server sends back.
import type { TestContext } from 'node:test'
import { once } from 'node:events'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import dnsPacket from 'dns-packet'
import { silentLogger } from '../../engine/log/index.js'
import { compileAddressSet } from '../../engine/net/client-address.js'
import { query } from '../../engine/testing/dns.js'
import { tempDir } from '../../engine/testing/temp.js'
import { writeTestCertificate } from '../../engine/testing/tls.js'
import { until } from '../../engine/testing/wait.js'
import { CertificateSource } from '../../engine/tls/certificates.js'
import { DohFront } from '../doh-front.js'
import { FrameType, FrameWriter, PREFACE } from '../h2/frames.js'
import { writeInt } from '../h2/hpack.js'
import type { Peer } from '../peer.js'
import { TransportCounters } from '../transport-counters.js'

export interface Front {
  port: number
  counters: TransportCounters
  /** Queries held (when the front does not answer at once), to answer later. */
  held: Array<{ msg: Buffer; peer: Peer }>
  dir: string
}

// An answer of `n` A records to `msg` (a large answer makes several DATA frames under a small window),
// their TTLs `ttls` in turn.
export function answer(msg: Buffer, n: number, ttls: readonly number[] = [60]): Buffer {
  const q = dnsPacket.decode(msg)
  const answers = Array.from({ length: n }, (_, i) => ({
    type: 'A' as const,
    name: q.questions![0]!.name,
    ttl: ttls[i % ttls.length]!,
    data: `192.0.2.${i % 250}`
  }))
  return dnsPacket.encode({ type: 'response', id: q.id, questions: q.questions, answers })
}

export async function front(
  t: TestContext,
  o: {
    maxStreams?: number
    hold?: boolean
    records?: number
    ttls?: number[]
    idleMs?: number
    trusted?: string[]
  } = {}
): Promise<Front> {
  const dir = tempDir(t)
  const { cert, key } = writeTestCertificate(dir, 'dns.test')
  const certificates = new CertificateSource({ cert, key }, silentLogger())
  const counters = new TransportCounters('doh')
  const held: Front['held'] = []
  const doh = new DohFront({
    certificates,
    maxStreams: o.maxStreams ?? 100,
    maxConnections: 500,
    maxPerSource: 500,
    idleTimeoutMs: o.idleMs ?? 30_000,
    messageTimeoutMs: 10_000,
    maxFrame: 65535,
    trusted: compileAddressSet(o.trusted ?? []),
    logger: silentLogger(),
    onQuery: (msg, peer) => {
      if (o.hold === true) held.push({ msg, peer })
      else {
        const a = answer(msg, o.records ?? 1, o.ttls)
        peer.channel.send(peer, a, a.length, true)
      }
    },
    counters,
    httpCounters: new TransportCounters('doh-http')
  })
  t.after(async () => {
    await doh.close()
    certificates.close()
  })
  return { port: await doh.listenTls('127.0.0.1', 0, 4), counters, held, dir }
}

/** A hand-made HTTP/2 client over TLS: the frames it sends, and every frame the server sends back. */
export class RawClient {
  readonly frames: Array<{ type: number; flags: number; id: number; payload: Buffer }> = []
  closed = false
  private pending = Buffer.alloc(0)
  private pings = 0
  constructor(readonly sock: TLSSocket) {
    sock.on('data', (b: Buffer) => {
      this.pending = Buffer.concat([this.pending, b])
      while (this.pending.length >= 9) {
        const len = this.pending.readUIntBE(0, 3)
        if (this.pending.length < 9 + len) break
        const p = this.pending
        this.frames.push({
          type: p[3]!,
          flags: p[4]!,
          id: p.readUInt32BE(5) & 0x7fffffff,
          payload: p.subarray(9, 9 + len)
        })
        this.pending = p.subarray(9 + len)
      }
    })
    sock.on('close', () => (this.closed = true))
    sock.on('error', () => {})
  }

  static async open(port: number, preface = true): Promise<RawClient> {
    const sock = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] })
    await once(sock, 'secureConnect')
    const c = new RawClient(sock)
    if (preface) {
      const w = new FrameWriter()
      w.settings([])
      sock.write(Buffer.concat([PREFACE, w.take()]))
    }
    return c
  }

  send(build: (w: FrameWriter) => void): void {
    const w = new FrameWriter()
    build(w)
    this.sock.write(w.take())
  }

  /** A raw frame, any type, flags and payload. */
  frame(type: number, flags: number, id: number, payload: Buffer): void {
    this.send((w) => {
      const at = w.header(payload.length, type, flags, id)
      payload.copy(w.reserve(0), at + 9)
      w.advance(payload.length)
    })
  }

  async frameOf(type: number, id?: number): Promise<{ flags: number; payload: Buffer }> {
    let f: RawClient['frames'][number] | undefined
    await until(
      `a frame of type ${type}`,
      () => (f = this.frames.find((x) => x.type === type && (id === undefined || x.id === id))) !== undefined,
      10_000,
      10
    )
    return f!
  }

  /** A PING round trip: every frame sent before it has been read, and answered, when this returns. */
  async sync(): Promise<void> {
    const tag = Buffer.from(`s${String(this.pings++).padStart(7, '0')}`, 'latin1')
    this.frame(FrameType.PING, 0, 0, tag)
    await until(
      'the PING answered',
      () => this.frames.some((x) => x.type === FrameType.PING && x.payload.equals(tag)),
      10_000,
      10
    )
  }

  /** The RST_STREAM codes the server sent on stream `id`. */
  resets(id: number): number[] {
    return this.frames
      .filter((x) => x.type === FrameType.RST_STREAM && x.id === id)
      .map((x) => x.payload.readUInt32BE(0))
  }

  async goawayCode(): Promise<number> {
    return (await this.frameOf(FrameType.GOAWAY)).payload.readUInt32BE(4)
  }
}

/** A GET request's header block: :method GET, :scheme https, :path, :authority, plus `pad` bytes of a header. */
export function getBlock(path: string, pad = 0): Buffer {
  const b = Buffer.alloc(64 + path.length + pad)
  let pos = 0
  b[pos++] = 0x82
  b[pos++] = 0x87
  pos = writeInt(b, pos, 4, 4, 0)
  pos = writeInt(b, pos, path.length, 7, 0)
  pos += b.write(path, pos, 'latin1')
  pos = writeInt(b, pos, 1, 4, 0)
  pos = writeInt(b, pos, 1, 7, 0)
  b[pos++] = 0x78
  if (pad > 0) {
    b[pos++] = 0
    pos = writeInt(b, pos, 5, 7, 0)
    pos += b.write('x-pad', pos, 'latin1')
    pos = writeInt(b, pos, pad, 7, 0)
    pos += b.write('p'.repeat(pad), pos, 'latin1')
  }
  return b.subarray(0, pos)
}

export const dnsPath = (id: number): string =>
  `/dns-query?dns=${query('www.example.org', 'A', { id }).toString('base64url')}`

/**
 * A header block of `fields` (name, value, name, value...) as HPACK literals without indexing, each
 * name a literal too: any name or value the test wants, upper case and pseudo-headers included.
 */
export function fieldBlock(fields: readonly string[]): Buffer {
  const b = Buffer.alloc(16 + fields.reduce((n, f) => n + f.length + 6, 0))
  let pos = 0
  for (let i = 0; i < fields.length; i++) {
    if (i % 2 === 0) b[pos++] = 0
    pos = writeInt(b, pos, fields[i]!.length, 7, 0)
    pos += b.write(fields[i]!, pos, 'latin1')
  }
  return b.subarray(0, pos)
}

/** The pseudo-headers of a valid GET of `path`, to build requests from. */
export const GET = (path: string): string[] => [
  ':method',
  'GET',
  ':scheme',
  'https',
  ':path',
  path,
  ':authority',
  'dns.test'
]
