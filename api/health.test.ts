/**
 * The api role's /health answers the local supervisor without API credentials in both settings of
 * `api.loopback-without-credentials`, so `filterd status` reads it; nothing else is let in by it:
 * the API still wants credentials, and a caller the front door relayed from outside gets no health.
 */
import { test, type TestContext } from 'node:test'
import { join } from 'node:path'
import { RELAYED_CLIENT_HEADER } from '../engine/net/access.js'
import { runCli, startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { tempDir, writeApiRoleConfig } from './testing/fixtures.js'

for (const loopbackFree of [false, true]) {
  test(`with api.loopback-without-credentials: ${loopbackFree}, /health answers loopback without credentials and filterd status exits 0`, async (t: TestContext) => {
    const { dir, cleanup } = tempDir('filterd-api-health-')
    t.after(cleanup)
    const port = await releasedPort()
    const file = writeApiRoleConfig(dir, {
      listen: `127.0.0.1:${port}`,
      pid: join(dir, 'run', 'api.pid'),
      api: [`  loopback-without-credentials: ${loopbackFree}`]
    })
    await startRole(t, 'api', file)
    const base = `http://127.0.0.1:${port}`
    const health = await fetch(`${base}/health`)
    t.assert.strictEqual(health.status, 200, await health.clone().text())
    t.assert.strictEqual(((await health.json()) as { role: string }).role, 'api')
    t.assert.strictEqual((await fetch(`${base}/users/`)).status, loopbackFree ? 200 : 401)
    t.assert.strictEqual((await fetch(`${base}/metrics`)).status, loopbackFree ? 200 : 401)
    // Relayed by the front door for a caller outside: judged as that caller, who needs credentials.
    const relayed = await fetch(`${base}/health`, { headers: { [RELAYED_CLIENT_HEADER]: '203.0.113.7' } })
    t.assert.strictEqual(relayed.status, 401)

    const status = await runCli(['status', '--config', file])
    t.assert.strictEqual(status.code, 0, status.stdout + status.stderr)
    t.assert.match(status.stdout, /^api +pid \d+ .*health ok/m)
  })
}
