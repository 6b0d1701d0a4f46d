/**
 * The certificate of the DoT and DoH listeners: its expiry on /metrics
 * (`filterd_dns_tls_cert_not_after_seconds`) and, when it expires within `common.tls-cert-warn-days`,
 * a degraded /health (200, each listener named). A real `filterd dns` with certificates made here.
 */
import { test, type TestContext } from 'node:test'
import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { world, writeConfigFile } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from '../engine/testing/tls.js'
import { fetchJson, until } from '../engine/testing/wait.js'

const skip = hasOpenssl() ? false : OPENSSL_MISSING

async function dnsWithCertificate(t: TestContext, days: number): Promise<{ metrics: number; notAfter: number }> {
  const w = await world(t)
  const { cert, key } = writeTestCertificate(w.dir, 'dns.test', days)
  const metrics = await releasedPort()
  const file = writeConfigFile(w, {
    proxy: {
      'metrics-listen': `127.0.0.1:${metrics}`,
      'dot-listen': ['127.0.0.1:0'],
      'doh-listen': ['127.0.0.1:0'],
      'tls-cert': cert,
      'tls-key': key
    }
  })
  await startRole(t, 'dns', file)
  const notAfter = Math.floor(Date.parse(new X509Certificate(readFileSync(cert)).validTo) / 1000)
  return { metrics, notAfter }
}

async function certificateSeries(metrics: number): Promise<string[]> {
  let lines: string[] = []
  await until('the certificate on /metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text()
    lines = text.split('\n').filter((l) => l.startsWith('filterd_dns_tls_cert_not_after_seconds{'))
    return lines.length === 2
  })
  return lines
}

test(
  'a certificate that expires within tls-cert-warn-days makes /health degraded, naming dot and doh',
  { skip },
  async (t: TestContext) => {
    const { metrics, notAfter } = await dnsWithCertificate(t, 2)
    const health = await fetchJson(`http://127.0.0.1:${metrics}/health`)
    t.assert.strictEqual(health.status, 200)
    t.assert.strictEqual(health.body.ok, true)
    t.assert.strictEqual(health.body.state, 'degraded')
    const problems = health.body.degraded as Array<{ what: string; why: string; warning?: boolean }>
    t.assert.deepStrictEqual(
      problems.map((p) => p.what),
      ['tls-cert dot', 'tls-cert doh']
    )
    t.assert.match(problems[0]!.why, /expires at \S+, in 1 day\(s\) \(common\.tls-cert-warn-days: 14\); renew it/)
    t.assert.deepStrictEqual(await certificateSeries(metrics), [
      `filterd_dns_tls_cert_not_after_seconds{process="dns-0",listener="dot"} ${notAfter}`,
      `filterd_dns_tls_cert_not_after_seconds{process="dns-0",listener="doh"} ${notAfter}`
    ])
  }
)

test(
  'a certificate valid for longer than tls-cert-warn-days leaves /health ok, its expiry on /metrics',
  { skip },
  async (t: TestContext) => {
    const { metrics, notAfter } = await dnsWithCertificate(t, 60)
    const health = await fetchJson(`http://127.0.0.1:${metrics}/health`)
    t.assert.strictEqual(health.status, 200)
    t.assert.deepStrictEqual([health.body.state, health.body.degraded], ['ok', []])
    t.assert.deepStrictEqual(await certificateSeries(metrics), [
      `filterd_dns_tls_cert_not_after_seconds{process="dns-0",listener="dot"} ${notAfter}`,
      `filterd_dns_tls_cert_not_after_seconds{process="dns-0",listener="doh"} ${notAfter}`
    ])
  }
)
