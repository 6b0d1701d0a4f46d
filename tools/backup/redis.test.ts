// Backup and restore of a host that follows a shared Redis store (docs/backup.md, "With a shared
// Redis store"): the restored replica resumes from its position, or bootstraps when the stream has
// moved past it, and ends equal to Redis either way.
import { after, before, test, type TestContext } from 'node:test'
import { join } from 'node:path'
import { parseConfig } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import { commitToSharedStore } from '../../engine/replica/commit.js'
import { connectSharedStore, type SharedStoreSettings } from '../../engine/replica/redis.js'
import { linkStore, testSettings } from '../../engine/testing/replica.js'
import { until } from '../../engine/testing/wait.js'
import { Store } from '../../engine/store/index.js'
import { startRedis, type TestRedis } from '../../engine/testing/redis.js'
import { tempDir } from '../../engine/testing/temp.js'
import { backup } from './backup.js'
import { restore } from './restore.js'

let redis: TestRedis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis.stop()
})

/** A host's config: its store, statistics and pid files in `root`, Redis shared. */
function hostConfig(root: string, name: string): ReturnType<typeof parseConfig> {
  const at = join(root, name)
  return parseConfig(
    [
      'common:',
      `  db: ${join(at, 'db')}`,
      `  redis-ip: ${redis.host}`,
      `  redis-port: ${redis.port}`,
      'stats:',
      `  dir: ${join(at, 'stats')}`,
      `  db: ${join(at, 'statsdb')}`,
      ...['api', 'sync'].flatMap((s) => [`${s}:`, `  pid: ${join(at, `${s}.pid`)}`])
    ].join('\n') + '\n',
    join(root, `${name}.yaml`)
  )
}

async function addUsers(store: Store, names: string[]): Promise<void> {
  for (const name of names)
    await store.write((w) => {
      w.putUser(w.store.newUser(name))
    })
}

async function restoredHost(
  t: TestContext,
  settings: SharedStoreSettings,
  root: string,
  dir: string,
  name: string
): Promise<{ store: Store; status: { readonly bootstraps: number } }> {
  const config = hostConfig(root, name)
  const r = await restore(config, dir)
  t.assert.strictEqual(r.manifest.redis, true)
  const store = Store.open(config.common.db)
  t.after(async () => {
    await store.close()
  })
  const linked = await linkStore(store, settings, silentLogger())
  t.after(async () => {
    await linked.close()
  })
  // The follower's live status: it may decide to bootstrap after linkStore has returned.
  return { store, status: linked.follower.status }
}

test('a restored replica catches up from Redis: from its position while the stream still holds it, else by a bootstrap', async (t: TestContext) => {
  const root = tempDir(t, 'filterd-backup-redis-')
  const settings = { ...testSettings(redis.host, redis.port), streamLength: 5 }
  const configA = hostConfig(root, 'a')
  const a = Store.open(configA.common.db)
  t.after(async () => {
    await a.close()
  })
  const la = await linkStore(a, settings, silentLogger())
  t.after(async () => {
    await la.close()
  })
  await addUsers(a, ['u1', 'u2', 'u3'])
  await until('A applying', () => a.replicaPosition()?.seq === 3)

  const dir = join(root, 'backup')
  const made = await backup(configA, dir)
  t.assert.strictEqual(made.manifest.redis, true)
  t.assert.strictEqual(made.manifest.store.users, 3)

  // Two writes after the backup: the stream (about five records kept) still holds them.
  await addUsers(a, ['after1', 'after2'])
  await until('A applying', () => a.replicaPosition()?.seq === 5)
  const b = await restoredHost(t, settings, root, dir, 'b')
  await until('B current', () => b.store.replicaPosition()?.seq === 5)
  t.assert.strictEqual(b.status.bootstraps, 0, "resumed from the backup's position")
  t.assert.deepStrictEqual([...b.store.users()].map((u) => u.name).sort(), ['after1', 'after2', 'u1', 'u2', 'u3'])

  // Hundreds of writes later the stream no longer holds the backup's position: a bootstrap.
  const r = connectSharedStore(settings, { commandTimeout: 3000 })
  t.after(() => {
    r.disconnect()
  })
  const epoch = a.replicaPosition()!.epoch
  for (let i = 0; i < 200; i++)
    await commitToSharedStore(r, settings, epoch, [['users', `bulk${i}`, a.newUser(`bulk${i}`)]])
  await until('A applying', () => a.replicaPosition()?.seq === 205)
  const c = await restoredHost(t, settings, root, dir, 'c')
  await until('C current', () => c.store.replicaPosition()?.seq === 205)
  t.assert.ok(c.status.bootstraps >= 1, 'bootstrapped')
  t.assert.strictEqual(c.store.userCount(), 205)
})
