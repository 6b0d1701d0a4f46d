// The certificate of the DoT and DoH listeners is replaced without a restart: when its files change,
// and on SIGHUP; a pair that does not load keeps the old one and says why.
import { test, type TestContext } from 'node:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { connect as tlsConnect, type PeerCertificate } from 'node:tls'
import { connect as http2Connect } from 'node:http2'
import { once } from 'node:events'
import { pino } from 'pino'
import { CertificateSource } from '../engine/tls/certificates.js'
import { tempDir } from '../engine/testing/dns.js'
import { writeTestCertificate } from '../engine/testing/tls.js'
import { until } from '../engine/testing/wait.js'
import { encryptedServer, encryptedWorld } from './testing/encrypted.js'

// The common name of the certificate a new TLS connection to `port` is served (`alpn`: dot or h2).
async function servedName(port: number, alpn: string): Promise<string> {
  const sock = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: [alpn] })
  sock.on('error', () => {})
  await once(sock, 'secureConnect')
  const cert: PeerCertificate = sock.getPeerCertificate()
  sock.destroy()
  return String(cert.subject.CN)
}

test('a new certificate is served without a restart when the files change, a broken one keeps the old, SIGHUP reloads', async (t: TestContext) => {
  const w = await encryptedWorld(t)
  const s = await encryptedServer(t, w)
  const dot = s.transports.dot[0]!
  const doh = s.transports.doh[0]!
  t.assert.strictEqual(await servedName(dot, 'dot'), 'dns.test')
  // An open connection keeps its certificate; new ones get the new one.
  const open = http2Connect(`https://127.0.0.1:${doh}`, { rejectUnauthorized: false })
  open.on('error', () => {})
  t.after(() => open.destroy())
  await once(open, 'connect')

  writeTestCertificate(w.dir, 'second.test') // the same two files, rewritten
  await until('the new certificate served', async () => (await servedName(dot, 'dot')) === 'second.test', 30_000, 200)
  t.assert.strictEqual(await servedName(doh, 'h2'), 'second.test')
  t.assert.ok(!open.destroyed && !open.closed, 'the open HTTP/2 connection stays')

  // A broken certificate: refused on SIGHUP (and on the file change), the previous one still served.
  writeFileSync(w.cert, 'not a certificate\n')
  process.emit('SIGHUP', 'SIGHUP')
  t.assert.strictEqual(await servedName(dot, 'dot'), 'second.test')
  t.assert.strictEqual(await servedName(doh, 'h2'), 'second.test')

  // A good pair again, picked up by SIGHUP at once.
  const dir = tempDir(t)
  const third = writeTestCertificate(dir, 'third.test')
  writeFileSync(w.key, readFileSync(third.key))
  writeFileSync(w.cert, readFileSync(third.cert))
  process.emit('SIGHUP', 'SIGHUP')
  t.assert.strictEqual(await servedName(dot, 'dot'), 'third.test')
  t.assert.strictEqual(await servedName(doh, 'h2'), 'third.test')
})

test('a certificate pair that does not load is refused with a warning naming the files and the reason', (t: TestContext) => {
  const dir = tempDir(t)
  const { cert, key } = writeTestCertificate(dir, 'one.test')
  const lines: Array<Record<string, unknown>> = []
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }
  )
  const source = new CertificateSource({ cert, key }, logger)
  // A key that does not match the certificate.
  const other = writeTestCertificate(tempDir(t), 'two.test')
  writeFileSync(key, readFileSync(other.key))
  t.assert.strictEqual(source.reload('test'), false)
  t.assert.strictEqual(source.failures, 1)
  const warn = lines.find((l) => l.level === 40)
  t.assert.ok(warn !== undefined)
  t.assert.match(String(warn.msg), /not reloaded .*still serving the previous one/)
  t.assert.strictEqual(warn.cert, cert)
  t.assert.match(String(warn.reason), /key/i)
  // At start, a bad pair is a config error naming the keys.
  t.assert.throws(() => new CertificateSource({ cert, key }, logger), /proxy\.tls-cert/)
})
