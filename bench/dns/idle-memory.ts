// Where the memory of an idle DoT connection goes: a bare Node server of one kind holds N
// idle connections from a client process, and prints what they added per connection, after a full
// garbage collection: the resident set, V8's heap in use, and memory outside the heap (RSS minus
// the heap's growth: Node's native objects, OpenSSL's, malloc's own overhead).
// Kinds: `net` (node:net, the TCP front's socket alone), `tls` (node:tls, default options), `tls12`
// (the same with TLS 1.2 at most); filterd's
// own figure, with its per-connection state, is bench/dns/dot-idle-udp.sh's).
// Usage: node --expose-gc dist/bench/dns/idle-memory.js KIND N CERT KEY
//   e.g. node --expose-gc dist/bench/dns/idle-memory.js tls 5000 /tmp/cert.pem /tmp/key.pem
import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer as createNetServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, connect as tlsConnect } from 'node:tls'
import { once } from 'node:events'

const [kind = 'tls', nArg = '2000', cert = '', key = ''] = process.argv.slice(2)

// The client side (a child process): opens N connections, sends one byte on each, waits for one back.
async function client(port: number, secure: boolean, n: number): Promise<void> {
  const socks: Socket[] = []
  let next = 0
  const openOne = async (): Promise<void> => {
    const s = secure
      ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false })
      : netConnect({ port, host: '127.0.0.1' })
    s.on('error', () => {})
    await once(s, secure ? 'secureConnect' : 'connect')
    s.write('x')
    await once(s, 'data')
    socks.push(s)
  }
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < n) {
        next++
        await openOne()
      }
    })
  )
  process.send?.({ open: socks.length })
  process.on('disconnect', () => process.exit(0))
}

function snapshot(): { rss: number; heap: number } {
  const g = (globalThis as { gc?: () => void }).gc
  g?.()
  g?.()
  const m = process.memoryUsage()
  return { rss: m.rss, heap: m.heapUsed }
}

async function server(): Promise<void> {
  const held: Socket[] = []
  const onSock = (s: Socket): void => {
    held.push(s)
    s.on('error', () => {})
    s.on('data', () => s.write('y'))
  }
  const srv: Server =
    kind === 'net'
      ? createNetServer(onSock)
      : createTlsServer(
          { cert: readFileSync(cert), key: readFileSync(key), maxVersion: kind === 'tls12' ? 'TLSv1.2' : 'TLSv1.3' },
          onSock
        )
  srv.listen(0, '127.0.0.1')
  await once(srv, 'listening')
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => setTimeout(r, 500))
  const before = snapshot()
  const child = fork(process.argv[1]!, ['--client', String(port), kind === 'net' ? '0' : '1', nArg])
  const [msg] = (await once(child, 'message')) as [{ open: number }]
  await new Promise((r) => setTimeout(r, 1000))
  const after = snapshot()
  report(kind, msg.open, before, after)
  child.disconnect()
  srv.close()
  for (const s of held) s.destroy()
}

function report(what: string, open: number, a: { rss: number; heap: number }, b: { rss: number; heap: number }): void {
  const kib = (x: number): string => (x / 1024 / open).toFixed(1)
  console.log(
    JSON.stringify({
      kind: what,
      open,
      rssKiB: kib(b.rss - a.rss),
      heapKiB: kib(b.heap - a.heap),
      outsideHeapKiB: kib(b.rss - a.rss - (b.heap - a.heap))
    })
  )
}

if (process.argv[2] === '--client') {
  await client(Number(process.argv[3]), process.argv[4] === '1', Number(process.argv[5]))
} else {
  await server()
}
