// A prototype of "DoT's TLS off the query thread", for bench/dns/encrypted.sh (TERMINATOR=1), not
// server code. Preloaded into filterd (`node --import ./dist/bench/dns/dot-terminator.js ...` with
// DOT_TERMINATOR=LISTEN_PORT:TCP_PORT:CERT:KEY), it starts one worker_thread in filterd's process
// that owns a TLS server on 127.0.0.1:LISTEN_PORT (TLS 1.2/1.3, ALPN dot, ECDSA or RSA as the
// files are) and, for each connection whose handshake is done, opens a plain TCP connection to
// filterd's own `proxy.listen` TCP port (TCP_PORT) and pipes the decrypted bytes both ways: the
// RFC 7766 framing, caps and answers stay those of filterd's TCP front, on the main thread, and
// the handshakes and record crypto move to the worker's thread. What it leaves out, so what it
// costs is a bound, not the design: the client's address and SNI client ID are lost (the main
// thread sees 127.0.0.1), and each message crosses loopback TCP once more each way (a MessagePort
// or shared ring would replace those two system calls per batch).
import { isMainThread, Worker, workerData } from 'node:worker_threads'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { createServer } from 'node:tls'

const spec = isMainThread ? process.env['DOT_TERMINATOR'] : (workerData as string)
if (spec !== undefined && spec !== '') {
  if (isMainThread) {
    new Worker(new URL(import.meta.url), { workerData: spec }).on('error', (err) => {
      process.stderr.write(`dot-terminator: ${String(err)}\n`)
    })
  } else {
    const [listen, target, cert, key] = spec.split(':') as [string, string, string, string]
    const server = createServer(
      {
        cert: readFileSync(cert),
        key: readFileSync(key),
        minVersion: 'TLSv1.2',
        ALPNProtocols: ['dot'],
        noDelay: true
      },
      (tls) => {
        const plain: Socket = connect({ host: '127.0.0.1', port: Number(target), noDelay: true })
        const close = (): void => {
          tls.destroy()
          plain.destroy()
        }
        tls.on('error', close).on('close', close)
        plain.on('error', close).on('close', close)
        tls.pipe(plain)
        plain.pipe(tls)
      }
    )
    server.on('tlsClientError', (_err, sock) => sock.destroy())
    server.listen(Number(listen), '127.0.0.1')
  }
}
