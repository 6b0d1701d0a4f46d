// Holds N DNS-over-TLS connections open and idle, for the encrypted benchmark (bench/dns/encrypted.sh):
// each connection finishes its handshake and one query (so the server has taken it into its table),
// then sends nothing. Prints one JSON line once all are open ({ open, failed, ms }), then another
// when stdin closes or on SIGTERM ({ stillOpen }: how many the server kept), and exits.
// Usage: node dist/bench/dns/dot-idle.js PORT N [CONCURRENCY=50]
import { connect, type TLSSocket } from 'node:tls'
import dnsPacket from 'dns-packet'
import { frame } from '../../engine/wire/index.js'

const port = Number(process.argv[2])
const total = Number(process.argv[3] ?? 10_000)
const concurrency = Number(process.argv[4] ?? 50)
const QUERY = frame(
  dnsPacket.encode({
    type: 'query',
    id: 1,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name: 'idle.bench-forwarded.example' }]
  })
)
const socks: TLSSocket[] = []
let failed = 0

// One connection: handshake, one query, its answer's first bytes; then it stays open and idle.
async function openOne(): Promise<void> {
  await new Promise<void>((resolve) => {
    const sock = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['dot'] })
    const fail = (): void => {
      failed++
      sock.destroy()
      resolve()
    }
    sock.once('error', fail)
    sock.once('close', fail) // closed by the server before its answer (a handshake past its timeout)
    sock.setTimeout(30_000, fail)
    sock.once('secureConnect', () => sock.write(QUERY))
    sock.once('data', () => {
      sock.off('error', fail)
      sock.off('close', fail)
      sock.setTimeout(0)
      sock.on('error', () => {})
      socks.push(sock)
      resolve()
    })
  })
}

const t0 = Date.now()
let next = 0
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      next++
      await openOne()
    }
  })
)
console.log(JSON.stringify({ open: socks.length, failed, ms: Date.now() - t0 }))

const finish = (): void => {
  console.log(JSON.stringify({ stillOpen: socks.filter((s) => !s.destroyed).length }))
  for (const s of socks) s.destroy()
  process.exit(0)
}
process.on('SIGTERM', finish)
process.stdin.on('end', finish)
process.stdin.resume()
