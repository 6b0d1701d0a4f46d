/**
 * A tiny authoritative responder standing in for the operator's recursive resolver: the quick
 * start uses it on machines with no reachable resolver (and says so), and tests use it as the
 * upstream they can control (answers, NXDOMAIN names, silence, counting what arrived).
 * It is deliberately simple and uses dns-packet: it is never on the product's hot path.
 */
import { createSocket, type Socket } from 'node:dgram'
import { createServer, type Server, type Socket as TcpSocket } from 'node:net'
import { once } from 'node:events'
import dnsPacket from 'dns-packet'

export interface StubResolverOptions {
  host?: string
  port?: number
  /** IPv4 answered for every A query (default 198.51.100.10, TEST-NET-2). */
  a?: string
  /** IPv6 answered for every AAAA query (default 2001:db8::10). */
  aaaa?: string
  /** Fixed answers by lower-case name. */
  records?: Record<string, { a?: string[]; aaaa?: string[] }>
  /** Names (and their subdomains) answered NXDOMAIN; `.invalid` always is. */
  nxdomain?: string[]
  /** Answer with TC set (over UDP) for these names. */
  truncate?: string[]
  /**
   * Names answered with TXT records filling about `udp` bytes over UDP (whatever the query's EDNS
   * size says: a resolver that ignores it; 0: an empty answer with TC set, as a well-behaved one
   * does) and `tcp` bytes over TCP (at most 65,535).
   */
  large?: Record<string, { udp: number; tcp: number }>
  ttl?: number
  /** Also listen on TCP (same port). */
  tcp?: boolean
  /** Milliseconds to wait before answering these names over UDP (a slow upstream for them). */
  delays?: Record<string, number>
}

export interface StubResolver {
  readonly port: number
  readonly host: string
  /** Questions received, as `name/TYPE`. */
  readonly seen: string[]
  /** The questions of `seen` that came over TCP. */
  readonly seenTcp: string[]
  /** The EDNS UDP payload size of each query of `seen` (0 without an OPT). */
  readonly ednsSizes: number[]
  /** While true, queries are read and counted but never answered (a dead upstream). */
  silent: boolean
  close(): Promise<void>
}

type Question = { name: string; type: string; class?: string }

function answer(query: dnsPacket.Packet, o: StubResolverOptions, overUdp: boolean): Buffer {
  const q = query.questions?.[0] as Question | undefined
  const base = {
    id: query.id ?? 0,
    type: 'response' as const,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: query.questions ?? []
  }
  if (q === undefined) return dnsPacket.encode({ ...base, flags: base.flags | 1 })
  const name = q.name.toLowerCase()
  const under = (list: string[] | undefined): boolean => (list ?? []).some((n) => name === n || name.endsWith('.' + n))
  if (name.endsWith('.invalid') || name === 'invalid' || under(o.nxdomain)) {
    return dnsPacket.encode({ ...base, flags: base.flags | 3 })
  }
  const large = o.large?.[name]
  if (large !== undefined) {
    const size = overUdp ? large.udp : large.tcp
    if (size === 0) return dnsPacket.encode({ ...base, flags: base.flags | dnsPacket.TRUNCATED_RESPONSE })
    return dnsPacket.encode({ ...base, answers: txtFilling(q.name, size) })
  }
  if (overUdp && under(o.truncate)) {
    return dnsPacket.encode({ ...base, flags: base.flags | dnsPacket.TRUNCATED_RESPONSE })
  }
  const ttl = o.ttl ?? 300
  const fixed = o.records?.[name]
  const answers: dnsPacket.Answer[] = []
  if (q.type === 'A')
    for (const data of fixed?.a ?? [o.a ?? '198.51.100.10']) answers.push({ type: 'A', name: q.name, ttl, data })
  if (q.type === 'AAAA')
    for (const data of fixed?.aaaa ?? [o.aaaa ?? '2001:db8::10'])
      answers.push({ type: 'AAAA', name: q.name, ttl, data })
  return dnsPacket.encode({ ...base, answers })
}

// TXT records of 1,000 bytes of text each (four strings), as many as fit in about `size` bytes.
function txtFilling(name: string, size: number): dnsPacket.Answer[] {
  const one: dnsPacket.Answer = { type: 'TXT', name, ttl: 60, data: [0, 1, 2, 3].map((i) => Buffer.alloc(250, 97 + i)) }
  const perRecord = dnsPacket.encode({ type: 'response', answers: [one] }).length - 12
  const answers: dnsPacket.Answer[] = []
  const header = 12 + name.length + 6
  for (let total = header + perRecord; total <= size; total += perRecord) answers.push(one)
  return answers
}

// Sends an answer now, or `wait` ms later (a slow upstream; dropped if the stub closed meanwhile).
function reply(udp: Socket, out: Buffer, to: { port: number; address: string }, wait: number): void {
  if (wait <= 0) {
    udp.send(out, to.port, to.address)
    return
  }
  setTimeout(() => {
    try {
      udp.send(out, to.port, to.address)
    } catch {
      // closed meanwhile
    }
  }, wait).unref()
}

// The delay configured for the name of an answer (0: none).
function delayOf(out: Buffer, delays: Record<string, number> | undefined): number {
  if (delays === undefined) return 0
  const q = dnsPacket.decode(out).questions?.[0] as Question | undefined
  return q === undefined ? 0 : (delays[q.name.toLowerCase()] ?? 0)
}

export async function startStubResolver(options: StubResolverOptions = {}): Promise<StubResolver> {
  const host = options.host ?? '127.0.0.1'
  // UDP and TCP share one port. With a kernel-chosen UDP port, the same TCP port can be taken (by
  // any TCP socket of the host, client ones included): then both are closed and another port tried.
  for (let attempt = 0; ; attempt++) {
    try {
      return await bindStub(host, options)
    } catch (err) {
      const retry = (err as { code?: string }).code === 'EADDRINUSE' && (options.port ?? 0) === 0 && attempt < 20
      if (!retry) throw err
    }
  }
}

async function bindStub(host: string, options: StubResolverOptions): Promise<StubResolver> {
  const udp: Socket = createSocket(host.includes(':') ? 'udp6' : 'udp4')
  const seen: string[] = []
  const seenTcp: string[] = []
  const ednsSizes: number[] = []
  const state = { silent: false }
  const handle = (msg: Buffer, overUdp: boolean): Buffer | undefined => {
    let query: dnsPacket.Packet
    try {
      query = dnsPacket.decode(msg)
    } catch {
      return undefined
    }
    const q = query.questions?.[0] as Question | undefined
    const asked = q === undefined ? '?' : `${q.name.toLowerCase()}/${q.type}`
    seen.push(asked)
    const opt = query.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined
    ednsSizes.push(opt?.udpPayloadSize ?? 0)
    if (!overUdp) seenTcp.push(asked)
    if (state.silent) return undefined
    return answer(query, options, overUdp)
  }
  udp.on('message', (msg, rinfo) => {
    const out = handle(msg, true)
    if (out !== undefined) reply(udp, out, rinfo, delayOf(out, options.delays))
  })
  udp.bind(options.port ?? 0, host)
  await once(udp, 'listening')
  const port = udp.address().port
  let tcp: Server | undefined
  const sockets = new Set<TcpSocket>()
  if (options.tcp === true) {
    tcp = createServer((sock) => {
      sockets.add(sock)
      sock.on('close', () => sockets.delete(sock))
      sock.on('error', () => {})
      let buf = Buffer.alloc(0)
      sock.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk])
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          const msg = buf.subarray(2, 2 + buf.readUInt16BE(0))
          buf = buf.subarray(2 + msg.length)
          const out = handle(msg, false)
          if (out !== undefined) {
            const len = Buffer.alloc(2)
            len.writeUInt16BE(out.length)
            sock.write(Buffer.concat([len, out]))
          }
        }
      })
    })
    tcp.listen(port, host)
    try {
      await once(tcp, 'listening')
    } catch (err) {
      // Nothing may stay open after a failed start: a leaked socket keeps a test process alive.
      udp.close()
      tcp.close()
      throw err
    }
  }
  return {
    port,
    host,
    seen,
    seenTcp,
    ednsSizes,
    get silent() {
      return state.silent
    },
    set silent(v: boolean) {
      state.silent = v
    },
    async close() {
      udp.close()
      for (const s of sockets) s.destroy()
      if (tcp !== undefined) await new Promise<void>((resolve) => tcp.close(() => resolve()))
    }
  }
}
