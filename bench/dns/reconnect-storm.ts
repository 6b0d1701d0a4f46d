// One client process of the reconnect storm (bench/dns/reconnect-storm.sh): CLIENTS DoT or DoH
// clients, client i connecting at START + i × SPREAD / TOTAL (the clients of all processes share
// one schedule: this process takes those with i ≡ INDEX mod PROCS), each from the loopback address
// 127.0.0.(2 + i mod ADDRS), so per-source caps see ADDRS sources as an ISP's server sees many.
// Each client does the TLS handshake (TLS 1.3; with `resume` offering a session ticket fetched
// before the storm), sends one query, and when its answer is in sends QUERIES-1 more at once; it
// keeps its connection open to the end, as a phone does. DoT is RFC 7858 framing; DoH is RFC 8484
// GET over HTTP/2, written by hand (a few frames; no node:http2 session per client). Every query
// asks a name of its own under bench-storm.example (forwarded, never blocked, never cached).
// Prints one JSON line: per client, its start, handshake, first answer and last answer (ms from
// START), or why it failed. `merge FILE...` reads those lines and prints the storm's figures.
// Usage: node dist/bench/dns/reconnect-storm.js dot|doh PORT TOTAL SPREAD_MS QUERIES START_EPOCH_MS INDEX PROCS ADDRS [full|resume]
//        node dist/bench/dns/reconnect-storm.js merge FILE...
import { readFileSync } from 'node:fs'
import { connect as tcpConnect } from 'node:net'
import { connect, type TLSSocket } from 'node:tls'
import dnsPacket from 'dns-packet'

/** A client still unanswered this long after the storm's start failed. */
const DEADLINE_MS = 60_000
/** Session tickets fetched before the storm (with `resume`), shared round robin by the clients. */
const TICKETS = 32

interface ClientResult {
  /** ms from START: connect called, handshake done, first answer, last answer (-1: never). */
  start: number
  secure: number
  first: number
  done: number
  resumed: boolean
  error: string
}

function dnsQuery(name: string, id: number): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name }]
  })
}

// HTTP/2 frames the DoH client needs (RFC 9113): the preface with empty SETTINGS, a SETTINGS ACK,
// and a GET's HEADERS (HPACK: :method GET and :scheme https indexed, :path and :authority literals).
const PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])
])
const SETTINGS_ACK = Buffer.from([0, 0, 0, 4, 1, 0, 0, 0, 0])
function frameHeader(len: number, type: number, flags: number, stream: number): Buffer {
  const h = Buffer.alloc(9)
  h.writeUIntBE(len, 0, 3)
  h[3] = type
  h[4] = flags
  h.writeUInt32BE(stream, 5)
  return h
}
function hpackString(s: string): Buffer {
  if (s.length >= 127) throw new Error('header value too long for this client')
  return Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'latin1')])
}
function getRequest(stream: number, msg: Buffer): Buffer {
  const block = Buffer.concat([
    Buffer.from([0x82, 0x87, 0x04]),
    hpackString(`/dns-query?dns=${msg.toString('base64url')}`),
    Buffer.from([0x01]),
    hpackString('dns.bench')
  ])
  return Buffer.concat([frameHeader(block.length, 1, 0x05, stream), block])
}

/** Answers to `expect` queries on one connection: `onAnswer` per answer; `fail` on anything else. */
interface Wire {
  hello(): void
  ask(i: number, msg: Buffer): void
  read(chunk: Buffer, onAnswer: () => void, fail: (why: string) => void): void
}

function dotWire(sock: TLSSocket): Wire {
  let buf: Buffer = Buffer.alloc(0)
  return {
    hello: () => {},
    ask: (_i, msg) => {
      const len = Buffer.alloc(2)
      len.writeUInt16BE(msg.length)
      sock.write(Buffer.concat([len, msg]))
    },
    read: (chunk, onAnswer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        buf = buf.subarray(2 + buf.readUInt16BE(0))
        onAnswer()
      }
    }
  }
}

function dohWire(sock: TLSSocket): Wire {
  let buf: Buffer = Buffer.alloc(0)
  return {
    hello: () => sock.write(PREFACE),
    ask: (i, msg) => sock.write(getRequest(2 * i + 1, msg)),
    read: (chunk, onAnswer, fail) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3)
        if (buf.length < 9 + len) break
        const type = buf[3]!
        const flags = buf[4]!
        buf = buf.subarray(9 + len)
        if (type === 4 && (flags & 1) === 0) sock.write(SETTINGS_ACK)
        else if (type === 3) fail('RST_STREAM')
        else if (type === 7) fail('GOAWAY')
        else if (type === 0 && (flags & 1) !== 0) onAnswer() // a response's last DATA frame
      }
    }
  }
}

async function fetchTickets(port: number, proto: string, n: number): Promise<Buffer[]> {
  const out: Buffer[] = []
  for (let i = 0; i < n; i++) {
    const s = await new Promise<Buffer | null>((resolve) => {
      const sock = connect({
        host: '127.0.0.1',
        port,
        rejectUnauthorized: false,
        servername: 'dns.bench',
        ALPNProtocols: [proto === 'doh' ? 'h2' : 'dot'],
        minVersion: 'TLSv1.3'
      })
      const timer = setTimeout(() => finish(null), 5000)
      const finish = (t: Buffer | null): void => {
        clearTimeout(timer)
        sock.destroy()
        resolve(t)
      }
      sock.once('session', (t: Buffer) => finish(t))
      sock.once('error', () => finish(null))
    })
    if (s !== null) out.push(s)
  }
  return out
}

async function storm(argv: string[]): Promise<void> {
  const [proto, portArg, totalArg, spreadArg, queriesArg, startArg, indexArg, procsArg, addrsArg, mode] = argv
  const port = Number(portArg)
  const total = Number(totalArg)
  const spread = Number(spreadArg)
  const queries = Number(queriesArg)
  const start = Number(startArg)
  const index = Number(indexArg)
  const procs = Number(procsArg)
  const addrs = Number(addrsArg)
  const tickets = mode === 'resume' ? await fetchTickets(port, proto!, TICKETS) : []
  const results: ClientResult[] = []
  const sockets: TLSSocket[] = []
  let open = 0
  let finished: () => void = () => {}
  const allDone = new Promise<void>((resolve) => (finished = resolve))
  const client = (i: number): void => {
    const r: ClientResult = { start: Date.now() - start, secure: -1, first: -1, done: -1, resumed: false, error: '' }
    results.push(r)
    const session = tickets.length > 0 ? tickets[i % tickets.length] : undefined
    // node:tls takes no local address: the TCP socket is opened first, from the client's own one.
    const tcp = tcpConnect({ host: '127.0.0.1', port, localAddress: `127.0.0.${2 + (i % addrs)}` })
    const sock = connect({
      socket: tcp,
      rejectUnauthorized: false,
      servername: 'dns.bench',
      ALPNProtocols: [proto === 'doh' ? 'h2' : 'dot'],
      minVersion: 'TLSv1.3',
      ...(session === undefined ? {} : { session })
    })
    sockets.push(sock)
    const wire = proto === 'doh' ? dohWire(sock) : dotWire(sock)
    let answered = 0
    const end = (why: string): void => {
      if (r.done >= 0 || r.error !== '') return
      r.error = why
      if (--open === 0) finished()
    }
    sock.on('secureConnect', () => {
      r.secure = Date.now() - start
      r.resumed = sock.isSessionReused()
      wire.hello()
      wire.ask(0, dnsQuery(`c${i}-0.bench-storm.example`, 1))
    })
    sock.on('data', (chunk: Buffer) =>
      wire.read(
        chunk,
        () => {
          answered++
          if (answered === 1) {
            r.first = Date.now() - start
            for (let k = 1; k < queries; k++) wire.ask(k, dnsQuery(`c${i}-${k}.bench-storm.example`, k + 1))
          }
          if (answered === queries && r.done < 0 && r.error === '') {
            r.done = Date.now() - start
            if (--open === 0) finished()
          }
        },
        end
      )
    )
    sock.on('error', (err: NodeJS.ErrnoException) => end(err.code ?? err.message))
    sock.on('close', () => end('closed'))
  }
  const mine: number[] = []
  for (let i = index; i < total; i += procs) mine.push(i)
  open = mine.length
  for (const i of mine) {
    const at = start + (i * spread) / total
    const wait = at - Date.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    client(i)
  }
  const deadline = setTimeout(finished, Math.max(0, start + DEADLINE_MS - Date.now()))
  await allDone
  clearTimeout(deadline)
  for (const r of results) if (r.done < 0 && r.error === '') r.error = 'deadline'
  for (const s of sockets) s.destroy()
  console.log(JSON.stringify({ proto, results }))
}

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

// The storm's figures per protocol: clients served and failed (by reason), the time until the last
// client was served (ms from the storm's start), the first answer's time from each client's own
// connect p50/p99/max, and handshakes per second (handshakes done over the span from the first
// connect to the last handshake done) with the share resumed.
function merge(files: string[]): void {
  const by = new Map<string, ClientResult[]>()
  for (const f of files) {
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      if (line.trim() === '') continue
      const { proto, results } = JSON.parse(line) as { proto: string; results: ClientResult[] }
      by.set(proto, [...(by.get(proto) ?? []), ...results])
    }
  }
  const out: Record<string, unknown> = {}
  for (const [proto, rs] of by) {
    const served = rs.filter((r) => r.done >= 0)
    const failed: Record<string, number> = {}
    for (const r of rs) if (r.done < 0) failed[r.error] = (failed[r.error] ?? 0) + 1
    const first = served.map((r) => r.first - r.start).sort((a, b) => a - b)
    const secure = rs.filter((r) => r.secure >= 0)
    const span = Math.max(...secure.map((r) => r.secure)) - Math.min(...rs.map((r) => r.start))
    out[proto] = {
      clients: rs.length,
      served: served.length,
      failed,
      allServedMs: served.length === rs.length ? Math.max(...served.map((r) => r.done)) : null,
      lastServedMs: Math.max(...served.map((r) => r.done)),
      firstAnswerMs: { p50: quantile(first, 0.5), p99: quantile(first, 0.99), max: first[first.length - 1] },
      handshakesPerSecond: Math.round((secure.length * 1000) / Math.max(1, span)),
      resumed: +(secure.filter((r) => r.resumed).length / Math.max(1, secure.length)).toFixed(3)
    }
  }
  console.log(JSON.stringify(out))
}

if (process.argv[2] === 'merge') merge(process.argv.slice(3))
else await storm(process.argv.slice(2))
