/**
 * The block page's HTTPS certificate (`blockpage.tls-cert`): its expiry on /metrics
 * (`filterd_blockpage_tls_cert_not_after_seconds{listener="https"}`) and a degraded /health when it
 * expires within `common.tls-cert-warn-days`. Certificates made here with openssl.
 */
import { test, type TestContext } from 'node:test'
import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from '../engine/testing/tls.js'
import { fetchJson } from '../engine/testing/wait.js'
import { makeStore } from './testing/fixture.js'
import { startBlockPage } from './server.js'

const skip = hasOpenssl() ? false : OPENSSL_MISSING

for (const { days, degraded } of [
  { days: 3, degraded: true },
  { days: 30, degraded: false }
]) {
  test(
    `an HTTPS certificate valid for ${days} days: /health ${degraded ? 'degraded' : 'ok'}, its expiry on /metrics`,
    { skip },
    async (t: TestContext) => {
      const { dir, store, config } = await makeStore(t)
      const { cert, key } = writeTestCertificate(dir, 'blockpage.test', days)
      const bp = await startBlockPage({
        config: {
          ...config,
          blockpage: { ...config.blockpage, 'tls-listen': '127.0.0.1:0', 'tls-cert': cert, 'tls-key': key }
        },
        store
      })
      t.after(() => bp.close())
      const health = await fetchJson(`http://127.0.0.1:${bp.port}/health`)
      t.assert.strictEqual(health.status, 200)
      t.assert.strictEqual(health.body.state, degraded ? 'degraded' : 'ok')
      const problems = health.body.degraded as Array<{ what: string; why: string }>
      t.assert.deepStrictEqual(
        problems.map((p) => p.what),
        degraded ? ['tls-cert https'] : []
      )
      const notAfter = Math.floor(Date.parse(new X509Certificate(readFileSync(cert)).validTo) / 1000)
      const text = await (await fetch(`http://127.0.0.1:${bp.port}/metrics`)).text()
      t.assert.ok(
        text.split('\n').includes(`filterd_blockpage_tls_cert_not_after_seconds{listener="https"} ${notAfter}`),
        text
      )
    }
  )
}
