/**
 * `filterd dns` on a fresh host: `common.db` holds no store yet (the api role has not run). The DNS
 * role creates an empty one and answers (every name forwarded), and follows the policy a writer
 * commits to it later. Before, it stopped with ENGINE_STORE_OPEN.
 */
import { test, type TestContext } from 'node:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Store } from '../engine/store/index.js'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { BLOCK_V4, ask, firstA, rcode, tempDir, writeConfigFile } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'

for (const dispatch of ['inline', 'pool'] as const) {
  test(`filterd dns (dispatch ${dispatch}) starts on an empty store folder, answers, and follows later writes`, async (t: TestContext) => {
    const dir = tempDir(t)
    const stub = await startStubResolver({ tcp: true })
    t.after(async () => {
      await stub.close()
    })
    const file = writeConfigFile({ dir, stub }, { proxy: { dispatch } })
    t.assert.strictEqual(existsSync(join(dir, 'db')), false)
    const child = await startRole(t, 'dns', file)
    t.assert.ok(existsSync(join(dir, 'db', 'data.mdb')))

    const forwarded = await ask(child.port, 'news.example.org')
    t.assert.strictEqual(rcode(forwarded), 'NOERROR')
    t.assert.notStrictEqual(firstA(forwarded), BLOCK_V4)

    // The api role's first write, made after the DNS role started.
    const store = Store.open(join(dir, 'db'))
    t.after(async () => {
      await store.close()
    })
    await store.write((w) => {
      w.putList(null, 'black', ['late.example'])
    })
    await until('the condition', async () => firstA(await ask(child.port, 'late.example')) === BLOCK_V4)
  })
}
