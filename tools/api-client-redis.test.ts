/**
 * `filterd api-client` on a host of several sharing one Redis (`common.redis-ip`): the command writes
 * through the shared store like an API write, so a client added or removed on one host is known to
 * every host's replica (and so to every host's api role).
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { verifySecret } from '../engine/auth/index.js'
import { silentLogger } from '../engine/log/index.js'
import { linkStore, testSettings } from '../engine/testing/replica.js'
import { runCli } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { Store } from '../engine/store/index.js'
import { redisServerAvailable, startRedis } from '../engine/testing/redis.js'
import { makeTempDir } from '../engine/testing/temp.js'

test(
  "api-client add and remove on one host reach another host's replica through Redis",
  { skip: redisServerAvailable() ? false : 'redis-server is not installed' },
  async (t: TestContext) => {
    const redis = await startRedis()
    t.after(() => redis.stop())
    const { dir, cleanup } = makeTempDir('filterd-api-client-redis-')
    t.after(cleanup)
    const prefix = `apiclient${process.pid}:`
    const settings = testSettings(redis.host, redis.port, prefix)
    // Two hosts, each with its replica following the shared store (what each host's sync role does).
    const hosts = ['a', 'b'].map((h) => Store.open(join(dir, h)))
    t.after(async () => {
      for (const s of hosts) await s.close()
    })
    for (const s of hosts) {
      const link = await linkStore(s, settings, silentLogger())
      t.after(() => link.close())
    }
    const [a, b] = hosts as [Store, Store]
    const config = join(dir, 'a.yaml')
    writeFileSync(
      config,
      `common:\n  db: ${join(dir, 'a')}\n  redis-ip: ${redis.host}\n  redis-port: ${redis.port}\n  redis-prefix: "${prefix}"\n`
    )

    const added = await runCli(['api-client', 'add', '--config', config, '--id', 'billing'])
    t.assert.strictEqual(added.code, 0, added.stderr)
    const secret = /^client_secret: (\S+)$/m.exec(added.stdout)![1]!
    t.assert.ok(a.getApiClient('billing') !== undefined, 'the command answered once its own host had the write')
    await until('host b to have the client', () => b.getApiClient('billing') !== undefined, 15_000)
    t.assert.strictEqual(await verifySecret(secret, b.getApiClient('billing')!), true)
    t.assert.deepStrictEqual([...b.clients()], [], 'not a categorization API client')

    const removed = await runCli(['api-client', 'remove', '--config', config, 'billing'])
    t.assert.strictEqual(removed.code, 0, removed.stderr)
    await until('host b to lose the client', () => b.getApiClient('billing') === undefined, 15_000)
  }
)
