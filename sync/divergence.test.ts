/**
 * Turning Redis on for a running host must not diverge silently. Two hosts, one
 * real redis-server, roles as daemons (sync/testing/topology.ts).
 *
 *   Host A runs as a single host (an api role without Redis); Redis is turned on by adding
 *   common.redis-ip and starting the sync role, but the api role is not restarted. Its next write
 *   is refused (503 API_STORE_FOLLOWS_REDIS, naming common.redis-ip) instead of changing A alone, and
 *   so is `filterd api-client add` with a config without redis-ip. Host B bootstraps and stays ok.
 *   A key written into A's LMDB behind Redis's back (with a bumped generation) is reported on A's
 *   /health (503, not ok, with the reason) and /metrics. `filterd redis-seed --detach` then makes the
 *   store A's own again (a write without Redis works), and a restarted sync role repairs the replica
 *   with a bootstrap in place: ok again, the foreign keys gone.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Store } from '../engine/store/index.js'
import { runCli } from '../engine/testing/daemon.js'
import { redisClient, redisServerAvailable, startRedis } from '../engine/testing/redis.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { fetchJson as json, until } from '../engine/testing/wait.js'
import { createTopology, defineHost, type Host } from './testing/topology.js'

/** The host's config without common.redis-ip: what a role or command started before Redis was turned on reads. */
function withoutRedis(h: Host): string {
  const doc = JSON.parse(readFileSync(h.config, 'utf8')) as { common: Record<string, unknown> }
  delete doc.common['redis-ip']
  delete doc.common['redis-port']
  const file = join(h.dir, 'no-redis.json')
  writeFileSync(file, JSON.stringify(doc))
  return file
}

async function metric(h: Host, line: string): Promise<boolean> {
  const res = await fetch(`${h.syncUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })
  return (await res.text()).split('\n').includes(line)
}

test(
  "Redis turned on under a running api role: its writes are refused, not kept on one host; a replica written behind Redis's back is reported",
  { timeout: 400_000, skip: redisServerAvailable() ? false : 'redis-server is not installed' },
  async (t: TestContext) => {
    const topo = createTopology(2)
    t.after(() => {
      topo.cleanup()
    })
    const { dir: root, cleanup } = makeTempDir('filterd-divergence-')
    const redis = await startRedis({ bind: topo.redisBind.join(' ') })
    const hosts: Host[] = []
    t.after(async () => {
      await Promise.all(
        hosts.map(async (h) => {
          await h.stop()
        })
      )
      await redis.stop()
      cleanup()
    })
    for (let i = 1; i <= 2; i++) hosts.push(await defineHost(topo, i, root, redis.port))
    const [a, b] = hosts as [Host, Host]
    const health = async (h: Host): Promise<{ status: number; body: any }> => await json(`${h.syncUrl}/health`)
    const single = withoutRedis(a)

    // A single host: its api role writes the local store.
    await a.start('api', single)
    t.assert.strictEqual(
      (await json(`${a.apiUrl}/users/alice`, 'PUT', { ip: ['127.0.0.4'], filter: [30] })).status,
      200
    )

    // Redis turned on: common.redis-ip added, the sync role started; the api role keeps running. The
    // first host creates the shared store from its replica (alice kept), then B bootstraps from it.
    await a.start('sync')
    await until('A following', async () => (await health(a)).body?.state === 'following')
    await b.start('sync')
    await until('B following', async () => (await health(b)).body?.state === 'following')

    // The reproduction: the stale api role's write is refused with the key named, and reaches no store.
    const dave = await json(`${a.apiUrl}/users/dave`, 'PUT', { ip: ['127.0.0.5'], filter: [40] })
    t.assert.strictEqual(dave.status, 503, JSON.stringify(dave.body))
    t.assert.strictEqual(dave.body.error.code, 'API_STORE_FOLLOWS_REDIS')
    t.assert.match(dave.body.error.message, /common\.redis-ip/)
    t.assert.strictEqual((await json(`${a.apiUrl}/users/dave`)).status, 404, "not in A's store")
    t.assert.strictEqual((await json(`${a.apiUrl}/users/alice`)).status, 200, 'reads still work')
    const r = redisClient(t, redis)
    t.assert.strictEqual(await r.hexists('filterd:h:users', 'dave'), 0, 'not in Redis')
    t.assert.strictEqual(await r.hexists('filterd:h:users', 'alice'), 1, "the single host's users went into Redis")

    // The CLI with a config without redis-ip: refused the same way, exit 1, nothing written.
    const cli = await runCli(['api-client', 'add', '--config', single, '--id', 'billing'])
    t.assert.strictEqual(cli.code, 1, cli.stderr)
    t.assert.match(cli.stderr, /common\.redis-ip/)
    t.assert.strictEqual(await r.hexists('filterd:h:clients', 'api:billing'), 0)
    const catapiClient = await runCli(['client', 'add', '--config', single, '--id', 'partner'])
    t.assert.strictEqual(catapiClient.code, 1, catapiClient.stderr)
    t.assert.match(catapiClient.stderr, /common\.redis-ip/)
    for (const h of [a, b]) {
      const got = await health(h)
      t.assert.strictEqual(got.status, 200)
      t.assert.strictEqual(got.body.ok, true, `host${h.index}: ${JSON.stringify(got.body)}`)
    }

    // A key written into A's LMDB behind Redis's back, the generation bumped as a writer would.
    const raw = Store.open(join(a.dir, 'db'))
    await raw.root.transaction(() => {
      void raw.root.openDB({ name: 'users' }).put('mallory', { ...raw.newUser('mallory'), filter: [40] })
      void raw.root.openDB({ name: 'meta' }).put('generation', raw.generation() + 1)
    })
    await raw.close()
    await until('A reporting the divergence', async () => (await health(a)).body?.diverged?.keys >= 1, 30_000)
    const split = await health(a)
    t.assert.strictEqual(split.status, 503)
    t.assert.strictEqual(split.body.ok, false)
    t.assert.strictEqual(split.body.state, 'following', 'it keeps following')
    t.assert.deepStrictEqual(split.body.diverged.examples, ['users/mallory'])
    t.assert.strictEqual(split.body.diverged.foreignGeneration, true)
    t.assert.match(split.body.diverged.reason, /did not come from Redis/)
    t.assert.ok(await metric(a, 'filterd_replica_diverged{reason="keys"} 1'))
    t.assert.ok(await metric(a, 'filterd_replica_diverged{reason="generation"} 1'))
    t.assert.ok(await metric(a, 'filterd_replica_divergent_keys 1'))
    t.assert.ok(await metric(b, 'filterd_replica_diverged{reason="keys"} 0'), 'B holds only what Redis holds')
    t.assert.strictEqual((await health(b)).body.ok, true)

    // Turning Redis off for A: roles stopped, `redis-seed --detach`; a write without Redis works again.
    await a.stop()
    const detached = await runCli(['redis-seed', '--detach', '--config', single])
    t.assert.strictEqual(detached.code, 0, detached.stderr)
    const local = await runCli(['api-client', 'add', '--config', single, '--id', 'local'])
    t.assert.strictEqual(local.code, 0, local.stderr)

    // And on again, with the repair: the sync role takes Redis's state in place; mallory and the
    // local-only client are swept, and A says ok.
    await a.start('sync')
    await until('A following and ok again', async () => (await health(a)).body?.ok === true, 30_000)
    const store = Store.open(join(a.dir, 'db'), { readOnly: true })
    t.after(async () => {
      await store.close()
    })
    t.assert.strictEqual(store.getUser('mallory'), undefined)
    t.assert.strictEqual(store.getApiClient('local'), undefined)
    t.assert.notStrictEqual(store.getUser('alice'), undefined)
    t.assert.ok(await metric(a, 'filterd_replica_diverged{reason="generation"} 0'))
  }
)
