// TLS handshakes per second against a DoT listener, with or without session resumption, for the
// encrypted benchmark (bench/dns/encrypted.sh). CONCURRENCY loops each connect, finish the handshake,
// wait for the server's session ticket (TLS 1.3 sends it after the handshake), and close; with
// `resume` each loop offers the ticket of its previous connection. Prints one JSON line:
// { handshakes, perSecond, resumed (share of handshakes the server resumed), failed }.
// Usage: node dist/bench/dns/tls-handshakes.js PORT SECONDS full|resume [CONCURRENCY=8] [TLS=TLSv1.3]
import { connect, type SecureVersion } from 'node:tls'

const port = Number(process.argv[2])
const seconds = Number(process.argv[3] ?? 5)
const resume = process.argv[4] === 'resume'
const concurrency = Number(process.argv[5] ?? 8)
const version = (process.argv[6] ?? 'TLSv1.3') as SecureVersion
const TICKET_WAIT_MS = 200

let handshakes = 0
let resumed = 0
let failed = 0

// One handshake; the session it leaves for the next (undefined when none came). Without `resume`
// the connection closes once its handshake is done; with it, a full handshake waits for the ticket
// the server sends after it (TLS 1.3), a resumed one closes at once (its ticket is used again).
async function handshake(session: Buffer | undefined): Promise<Buffer | undefined> {
  return await new Promise((resolve) => {
    const sock = connect({
      host: '127.0.0.1',
      port,
      rejectUnauthorized: false,
      ALPNProtocols: ['dot'],
      minVersion: version,
      maxVersion: version,
      ...(session === undefined ? {} : { session })
    })
    let next: Buffer | undefined
    let secure = false
    const done = (): void => {
      clearTimeout(timer)
      sock.destroy()
      resolve(next)
    }
    const timer = setTimeout(() => {
      failed++
      done()
    }, 10_000)
    sock.once('error', () => {
      failed++
      done()
    })
    sock.once('session', (s: Buffer) => {
      next = s
      if (secure) done()
    })
    sock.once('secureConnect', () => {
      secure = true
      handshakes++
      if (sock.isSessionReused()) resumed++
      if (!resume || sock.isSessionReused() || next !== undefined) done()
      else setTimeout(done, TICKET_WAIT_MS)
    })
  })
}

const end = Date.now() + seconds * 1000
const t0 = Date.now()
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    let session: Buffer | undefined
    while (Date.now() < end) {
      const s = await handshake(resume ? session : undefined)
      session = s ?? session
    }
  })
)
const elapsed = (Date.now() - t0) / 1000
console.log(
  JSON.stringify({
    handshakes,
    perSecond: Math.round(handshakes / elapsed),
    resumed: handshakes === 0 ? 0 : +(resumed / handshakes).toFixed(3),
    failed
  })
)
