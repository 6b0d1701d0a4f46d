/**
 * `filterd client` (categorization API clients) on a host of several sharing one Redis
 * (`common.redis-ip`): add, rotate and remove write through the shared store like an API write, so
 * a client made on one host is known to every host's replica (and so to every host's catapi role),
 * and it survives that host's next bootstrap from Redis (which sweeps out what Redis does not hold).
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { verifySecret } from '../engine/auth/index.js'
import { silentLogger } from '../engine/log/index.js'
import { commitToSharedStore } from '../engine/replica/commit.js'
import { linkStore, testSettings } from '../engine/testing/replica.js'
import { until } from '../engine/testing/wait.js'
import { Store } from '../engine/store/index.js'
import { runCli } from '../engine/testing/daemon.js'
import { redisClient, redisServerAvailable, startRedis } from '../engine/testing/redis.js'
import { makeTempDir } from '../engine/testing/temp.js'

const secretOf = (stdout: string): string => /^client_secret: (\S+)$/m.exec(stdout)![1]!

test(
  "client add, rotate and remove on one host reach another host's replica through Redis, and survive a bootstrap",
  { skip: redisServerAvailable() ? false : 'redis-server is not installed' },
  async (t: TestContext) => {
    const redis = await startRedis()
    t.after(() => redis.stop())
    const { dir, cleanup } = makeTempDir('filterd-client-redis-')
    t.after(cleanup)
    const prefix = `catclient${process.pid}:`
    // A short stream, so that host A, away for a few hundred writes, has to bootstrap when it returns.
    const settings = { ...testSettings(redis.host, redis.port, prefix), streamLength: 5 }
    const stores = ['a', 'b', 'c'].map((h) => Store.open(join(dir, h)))
    t.after(async () => {
      for (const s of stores) await s.close()
    })
    const [a, b, c] = stores as [Store, Store, Store]
    // Hosts A and B with their replicas following the shared store (what each host's sync role does).
    let linkA = await linkStore(a, settings, silentLogger())
    const linkB = await linkStore(b, settings, silentLogger())
    t.after(async () => {
      await linkA.close()
      await linkB.close()
    })
    const config = join(dir, 'a.yaml')
    writeFileSync(
      config,
      `common:\n  db: ${join(dir, 'a')}\n  redis-ip: ${redis.host}\n  redis-port: ${redis.port}\n  redis-prefix: "${prefix}"\n`
    )

    const added = await runCli(['client', 'add', '--config', config, '--id', 'partner', '--label', 'Partner'])
    t.assert.strictEqual(added.code, 0, added.stderr)
    const first = secretOf(added.stdout)
    t.assert.ok(a.getClient('partner') !== undefined, 'the command answered once its own host had the write')
    await until('host b to have the client', () => b.getClient('partner') !== undefined)
    t.assert.strictEqual(await verifySecret(first, b.getClient('partner')!), true)
    t.assert.strictEqual(b.getClient('partner')!.label, 'Partner')
    t.assert.strictEqual(b.getApiClient('partner'), undefined, 'not a management API client')
    const again = await runCli(['client', 'add', '--config', config, '--id', 'partner'])
    t.assert.strictEqual(again.code, 1, 'a duplicate id is refused as on one host')

    const rotated = await runCli(['client', 'rotate', '--config', config, 'partner'])
    t.assert.strictEqual(rotated.code, 0, rotated.stderr)
    const second = secretOf(rotated.stdout)
    await until('host b to have the new secret', async () => await verifySecret(second, b.getClient('partner')!))
    t.assert.strictEqual(
      await verifySecret(first, b.getClient('partner')!),
      false,
      'the old secret stops working on host b'
    )

    // Host A away while 300 writes land (the stream keeps about 5): on its return it bootstraps from
    // Redis in place, sweeping out what Redis lacks; the client, written to Redis, stays.
    await linkA.close()
    const r = redisClient(t, redis)
    const epoch = b.replicaPosition()!.epoch
    for (let i = 0; i < 300; i++)
      await commitToSharedStore(r, settings, epoch, [['users', `bulk${i}`, b.newUser(`bulk${i}`)]])
    linkA = await linkStore(a, settings, silentLogger())
    const last = Number(await r.get(settings.keys.seq))
    // Its position is durable a moment before the follower counts the bootstrap: wait for both.
    await until(
      'host a current, by a bootstrap',
      () => a.replicaPosition()?.seq === last && linkA.follower.status.bootstraps >= 1
    )
    t.assert.strictEqual(
      await verifySecret(second, a.getClient('partner')!),
      true,
      "the client survived host a's bootstrap"
    )
    // A host joining late has it too.
    const linkC = await linkStore(c, settings, silentLogger())
    t.after(() => linkC.close())
    t.assert.strictEqual(await verifySecret(second, c.getClient('partner')!), true, 'a late host bootstraps the client')

    const removed = await runCli(['client', 'remove', '--config', config, 'partner'])
    t.assert.strictEqual(removed.code, 0, removed.stderr)
    await until(
      'hosts b and c to lose the client',
      () => b.getClient('partner') === undefined && c.getClient('partner') === undefined
    )
    t.assert.strictEqual(a.getClient('partner'), undefined)
  }
)

test(
  "client add answers 1 with the API's error, changing nothing, when the shared store is down",
  { skip: redisServerAvailable() ? false : 'redis-server is not installed' },
  async (t: TestContext) => {
    const redis = await startRedis()
    t.after(() => redis.stop())
    const { dir, cleanup } = makeTempDir('filterd-client-redis-')
    t.after(cleanup)
    const prefix = `catclientdown${process.pid}:`
    const a = Store.open(join(dir, 'a'))
    t.after(() => a.close())
    // A's replica follows the shared store once, then Redis goes away (this process's link first, so
    // only the command meets the outage).
    const link = await linkStore(a, testSettings(redis.host, redis.port, prefix), silentLogger())
    await link.close()
    const config = join(dir, 'a.yaml')
    writeFileSync(
      config,
      `common:\n  db: ${join(dir, 'a')}\n  redis-ip: ${redis.host}\n  redis-port: ${redis.port}\n  redis-prefix: "${prefix}"\n`
    )
    await redis.stop({ keepData: true })
    const added = await runCli(['client', 'add', '--config', config, '--id', 'nowhere'])
    t.assert.strictEqual(added.code, 1, added.stdout + added.stderr)
    t.assert.match(added.stderr, /filterd client: .*/)
    t.assert.doesNotMatch(added.stdout, /client_secret/, 'no secret printed for a client that was not made')
    t.assert.strictEqual(a.getClient('nowhere'), undefined, 'the local replica did not take it either')
  }
)
