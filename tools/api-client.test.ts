/**
 * `filterd api-client` end to end: the command's process writes the store, the management API (in
 * this process, on the same LMDB store) enforces what it wrote on its next request.
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { call, relayedFrom, startApi } from '../api/testing/fixtures.js'
import { runCli, type CliRun } from '../engine/testing/daemon.js'

function field(run: CliRun, name: string): string {
  const v = new RegExp(`^${name}: (\\S+)$`, 'm').exec(run.stdout)?.[1]
  if (v === undefined) throw new Error(`no ${name} in: ${run.stdout}${run.stderr}`)
  return v
}

test('api-client add prints a secret once that then authenticates, list shows ids only, and remove revokes it', async (t: TestContext) => {
  const s = await startApi({ impl: 'node' })
  t.after(() => s.close())
  const config = join(s.dir, 'cli.yaml')
  writeFileSync(config, `common:\n  db: ${s.config.common.db}\n`)

  const added = await runCli(['api-client', 'add', '--config', config, '--id', 'billing', '--label', 'Billing system'])
  t.assert.strictEqual(added.code, 0, added.stderr)
  t.assert.strictEqual(field(added, 'client_id'), 'billing')
  const secret = field(added, 'client_secret')
  const token = field(added, 'bearer_token')
  t.assert.strictEqual(token, `billing.${secret}`)
  t.assert.match(added.stderr, /shown only now/)
  const basic = `Basic ${Buffer.from(`billing:${secret}`).toString('base64')}`
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: `Bearer ${token}` })))
      .status,
    200
  )
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: basic }))).status,
    200
  )

  const listed = await runCli(['api-client', 'list', '--config', config])
  t.assert.strictEqual(listed.code, 0, listed.stderr)
  t.assert.match(listed.stdout, /^client_id\tcreated\tlabel$/m)
  t.assert.match(listed.stdout, /^billing\t\d{4}-\d\d-\d\dT[^\t]+\tBilling system$/m)
  t.assert.ok(!listed.stdout.includes(secret), 'no secret')
  t.assert.ok(!listed.stdout.includes('scrypt'), 'no hash')
  // The categorization API's clients are another table: `filterd client list` does not show it.
  t.assert.doesNotMatch((await runCli(['client', 'list', '--config', config])).stdout, /billing/)

  const again = await runCli(['api-client', 'add', '--config', config, '--id', 'billing'])
  t.assert.strictEqual(again.code, 1)
  t.assert.match(again.stderr, /already exists/)

  const removed = await runCli(['api-client', 'remove', '--config', config, 'billing'])
  t.assert.strictEqual(removed.code, 0, removed.stderr)
  // Both headers had been verified and cached; the store write drops the cache.
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: `Bearer ${token}` })))
      .status,
    401
  )
  t.assert.strictEqual(
    (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: basic }))).status,
    401
  )
  t.assert.doesNotMatch((await runCli(['api-client', 'list', '--config', config])).stdout, /billing/)
  t.assert.strictEqual((await runCli(['api-client', 'remove', '--config', config, 'billing'])).code, 1)
})

test('api-client refuses a bad id, a missing --config and stray arguments with exit 2', async (t: TestContext) => {
  const s = await startApi({ impl: 'node' })
  t.after(() => s.close())
  const config = join(s.dir, 'cli.yaml')
  writeFileSync(config, `common:\n  db: ${s.config.common.db}\n`)
  t.assert.strictEqual((await runCli(['api-client', 'add', '--config', config, '--id', 'a:b'])).code, 2)
  t.assert.match((await runCli(['api-client', 'list'])).stderr, /--config FILE is required/)
  t.assert.strictEqual((await runCli(['api-client', 'remove', '--config', config])).code, 2)
  t.assert.strictEqual((await runCli(['api-client', 'list', '--config', config, 'extra'])).code, 2)
  const help = await runCli(['api-client', '--help'])
  t.assert.strictEqual(help.code, 0)
  t.assert.match(help.stdout, /bearer_token/)
})
