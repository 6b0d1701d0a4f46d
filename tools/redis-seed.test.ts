/**
 * `filterd redis-seed` against a real redis-server: a reseed refused while Redis holds a store (unless
 * --force), and `--adopt`, the way out of `redis-behind` that keeps what Redis holds under a new
 * `reseed:` epoch (every host then bootstraps from it; engine/replica/consistency.test.ts).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Store } from '../engine/store/index.js'
import { runCli } from '../engine/testing/daemon.js'
import { redisClient, redisServerAvailable, startRedis } from '../engine/testing/redis.js'
import { tempDir } from '../engine/testing/temp.js'

test(
  "redis-seed: refused over a store without --force; --adopt keeps Redis's state under a new reseed epoch",
  { skip: redisServerAvailable() ? false : 'redis-server is not installed' },
  async (t: TestContext) => {
    const redis = await startRedis()
    t.after(() => redis.stop())
    const dir = tempDir(t, 'filterd-redis-seed-')
    const prefix = 'seedtest:'
    const db = join(dir, 'db')
    const store = Store.open(db)
    await store.write((w) => {
      w.putUser({ ...w.store.newUser('alice'), ip: ['10.0.0.1'] })
      w.claimAddresses('alice', ['10.0.0.1'])
    })
    await store.close()
    const config = join(dir, 'host.yaml')
    writeFileSync(
      config,
      `common:\n  db: ${db}\n  redis-ip: ${redis.host}\n  redis-port: ${redis.port}\n  redis-prefix: "${prefix}"\n`
    )
    const r = redisClient(t, redis)

    const both = await runCli(['redis-seed', '--config', config, '--adopt', '--force'])
    t.assert.strictEqual(both.code, 2, both.stderr)
    t.assert.match(both.stderr, /--adopt and --force exclude each other/)
    const nothing = await runCli(['redis-seed', '--config', config, '--adopt'])
    t.assert.strictEqual(nothing.code, 1)
    t.assert.match(nothing.stderr, /holds no store to adopt/)

    // The first seed from this host's store; a second one is refused while Redis holds it.
    const seeded = await runCli(['redis-seed', '--config', config])
    t.assert.strictEqual(seeded.code, 0, seeded.stderr)
    const epoch = await r.get(`${prefix}epoch`)
    t.assert.match(epoch ?? '', /^reseed:/)
    t.assert.strictEqual((await r.hkeys(`${prefix}h:users`)).join(), 'alice')
    const refused = await runCli(['redis-seed', '--config', config])
    t.assert.strictEqual(refused.code, 1)
    t.assert.match(refused.stderr, /holds a store .*add --force/)

    // --adopt: the hashes, seq and stream stay as Redis holds them; only the epoch is new.
    await r.set(`${prefix}seq`, 7)
    const adopted = await runCli(['redis-seed', '--config', config, '--adopt'])
    t.assert.strictEqual(adopted.code, 0, adopted.stderr)
    t.assert.match(adopted.stdout, /every host adopts the store .* \(seq 7\); epoch reseed:/)
    const next = await r.get(`${prefix}epoch`)
    t.assert.match(next ?? '', /^reseed:/)
    t.assert.notStrictEqual(next, epoch)
    t.assert.strictEqual(await r.get(`${prefix}seq`), '7')
    t.assert.strictEqual((await r.hkeys(`${prefix}h:users`)).join(), 'alice')
  }
)
