/**
 * `filterd reload` prints each role's answer (the outcome file next to its pid file) and exits 1 when
 * a role refused the config; `filterd status` shows a restart a reload left pending. Against a real
 * `filterd dns` child with a DoT listener: a live change (a new certificate pair, served from the
 * next handshake: proxy.tls-cert applies live), a restart-needing change, a refused change (a
 * certificate whose key does not match).
 */
import { test, type TestContext } from 'node:test'
import { X509Certificate } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from 'node:tls'
import { once } from 'node:events'
import { world, writeConfigFile, type World } from '../../engine/testing/dns.js'
import { runCli, startRole } from '../../engine/testing/daemon.js'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from '../../engine/testing/tls.js'

function pair(w: World, name: string): { cert: string; key: string } {
  const dir = join(w.dir, name)
  mkdirSync(dir)
  return writeTestCertificate(dir, `${name}.test`)
}

/** The SHA-256 fingerprint of the certificate the DoT listener on `port` serves. */
async function servedFingerprint(port: number): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false })
  try {
    await once(socket, 'secureConnect')
    return socket.getPeerCertificate().fingerprint256
  } finally {
    socket.destroy()
  }
}

test(
  'filterd reload reports per role what was applied, refused and needs a restart; filterd status shows the pending restart',
  { skip: hasOpenssl() ? false : OPENSSL_MISSING, timeout: 120_000 },
  async (t: TestContext) => {
    const w = await world(t)
    const first = pair(w, 'first')
    const second = pair(w, 'second')
    const proxy = (
      tls: { cert: string; key: string },
      extra: Record<string, unknown> = {}
    ): Record<string, unknown> => ({
      'dot-listen': ['127.0.0.1:0'],
      'tls-cert': tls.cert,
      'tls-key': tls.key,
      'log-level': 'info', // for the start line, which names the DoT port
      ...extra
    })
    const file = writeConfigFile(w, { proxy: proxy(first) })
    const dns = await startRole(t, 'dns', file)
    const pid = dns.proc.pid!
    const started = await dns.waitForLog((l) => l.msg === 'dns started')
    const dot = Number(/^dns dot \S+:(\d+)$/m.exec((started.endpoints as string[]).join('\n'))![1])
    const fingerprint = (f: string): string => new X509Certificate(readFileSync(f)).fingerprint256
    t.assert.strictEqual(await servedFingerprint(dot), fingerprint(first.cert))

    // A live change: a new certificate pair, served from the next handshake.
    writeConfigFile(w, { proxy: proxy(second) })
    const live = await runCli(['reload', '--config', file])
    t.assert.strictEqual(live.code, 0, live.stdout + live.stderr)
    t.assert.strictEqual(live.stdout, `dns: pid ${pid} applied proxy.tls-cert, proxy.tls-key\n`)
    t.assert.strictEqual(await servedFingerprint(dot), fingerprint(second.cert))

    // Nothing changed.
    const same = await runCli(['reload', '--config', file])
    t.assert.strictEqual(same.code, 0)
    t.assert.strictEqual(same.stdout, `dns: pid ${pid}: nothing this role reads changed\n`)

    // A change that needs a restart: applied nothing, said so, and status shows it pending.
    writeConfigFile(w, { proxy: proxy(second, { 'tcp-idle-timeout': 20_000 }) })
    const restart = await runCli(['reload', '--config', file])
    t.assert.strictEqual(restart.code, 0, restart.stdout + restart.stderr)
    t.assert.strictEqual(
      restart.stdout,
      `dns: pid ${pid} applied nothing live; needs a restart of the dns role (still running on the old value): proxy.tcp-idle-timeout\n`
    )
    const status = await runCli(['status', '--config', file])
    t.assert.match(
      status.stdout,
      /^ {11}restart pending: a reload changed proxy\.tcp-idle-timeout \(still the old value until the dns role restarts\)$/m
    )

    // A refused change: a certificate with the first pair's key, which does not match it.
    writeConfigFile(w, { proxy: proxy({ cert: first.cert, key: second.key }, { 'tcp-idle-timeout': 20_000 }) })
    const refused = await runCli(['reload', '--config', file])
    t.assert.strictEqual(refused.code, 1, refused.stdout + refused.stderr)
    t.assert.match(
      refused.stdout,
      new RegExp(
        `^dns: pid ${pid} REFUSED proxy\\.tls-cert: proxy\\.tls-cert / proxy\\.tls-key \\(${first.cert}, ${second.key}\\): .+; still running on the previous config; needs a restart of the dns role \\(still running on the old value\\): proxy\\.tcp-idle-timeout\\n$`
      )
    )
    t.assert.strictEqual(await servedFingerprint(dot), fingerprint(second.cert), 'the previous pair is still served')
  }
)
