/**
 * The sync role as a real process against a real Redis (faults):
 *
 *   a `filterd sync` killed (SIGKILL) while it applies a stream of writes restarts from its last
 *   applied position: the LMDB store it left holds exactly the records up to the position it
 *   recorded (both are written in one transaction), and after the restart the replica equals Redis
 *   without a bootstrap;
 *   under `filterd all` with Redis configured, the sync role runs and its /health and /metrics show
 *   the replication state and lag.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { commitToSharedStore } from '../engine/replica/commit.js'
import { parseStored } from '../engine/replica/redis.js'
import { testSettings } from '../engine/testing/replica.js'
import { Store, type StoreOp, type UserRecord } from '../engine/store/index.js'
import { FILTERD } from '../engine/testing/daemon.js'
import { rawExchange } from '../engine/testing/http.js'
import { redisClient, startRedis } from '../engine/testing/redis.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { fetchJson as json, until } from '../engine/testing/wait.js'
import { defineHost, type Topology } from './testing/topology.js'
import { demoConfig, demoPorts } from '../engine/testing/demo-config.js'

const loopback: Topology = {
  kind: 'loopback',
  hostAddress: () => '127.0.0.1',
  clientAddress: () => '127.0.0.1',
  peerAddress: () => '127.0.0.1',
  redisAddressFor: () => '127.0.0.1',
  redisBind: ['127.0.0.1'],
  prefix: () => [],
  cleanup: () => {}
}

const user = (n: number): UserRecord => ({
  name: `u${n}`,
  safesearch: 'off',
  safeyoutube: 'off',
  status: 'enabled',
  filter: [n],
  ip: []
})
const KEYS = 50
const domains = Array.from({ length: 40 }, (_, k) => `d${k}.example`)
/** Record `n` of the test's stream: user `k<n mod 50>` and user `last` at marker n, and a list. */
const recordOps = (n: number): StoreOp[] => [
  ['users', `k${n % KEYS}`, user(n)],
  ['users', 'last', user(n)],
  ['lists', `user:k${n % KEYS}:black`, [...domains, `n${n}.example`]]
]

test(
  'a sync process killed mid-apply resumes from its last applied position; data and position were committed together',
  { timeout: 150_000 },
  async (t: TestContext) => {
    const { dir: root, cleanup } = makeTempDir('filterd-sync-kill-')
    const redis = await startRedis()
    t.after(async () => {
      await redis.stop()
      cleanup()
    })
    const host = await defineHost(loopback, 1, root, redis.port)
    t.after(async () => {
      await host.stop()
    })
    const health = async (): Promise<any> => (await json(`${host.syncUrl}/health`)).body
    const first = await host.start('sync')
    await until('the first sync creating the shared store', async () => (await health())?.state === 'following')

    const settings = testSettings('127.0.0.1', redis.port, 'filterd:')
    const r = redisClient(t, { host: '127.0.0.1', port: redis.port })
    const epoch = (await r.get(settings.keys.epoch))!
    const base = Number((await r.get(settings.keys.seq)) ?? 0)
    // One connection, commands pipelined in order: record n gets seq base + n.
    const TOTAL = 30_000
    let written = 0
    const writer = (async () => {
      for (let n = 1; n <= TOTAL; n += 250) {
        await Promise.all(
          Array.from({ length: Math.min(250, TOTAL + 1 - n) }, async (_, k) => {
            const { seq } = await commitToSharedStore(r, settings, epoch, recordOps(n + k))
            if (seq !== base + n + k) throw new Error(`record ${n + k} got seq ${seq}`)
          })
        )
        written = n + 249
      }
    })()
    await until('the sync process applying the stream', async () => (await health()).appliedSeq >= base + 2000)
    first.proc.kill('SIGKILL')
    await once(first.proc, 'exit')

    // What the killed process left: a position, and exactly the records up to it.
    const store = Store.open(join(host.dir, 'db'))
    const position = store.replicaPosition()!
    const applied = position.seq - base
    t.diagnostic(`killed after applying ${applied} of ${TOTAL} records (${written} written)`)
    t.assert.ok(applied >= 2000 && applied < TOTAL, `applied ${applied}`)
    t.assert.strictEqual(store.replicaState(), 'following')
    t.assert.strictEqual(
      store.getUser('last')?.filter[0],
      applied,
      'the last applied record is the one the position names'
    )
    for (let k = 0; k < KEYS; k++) {
      const latest = applied - ((((applied - k) % KEYS) + KEYS) % KEYS)
      t.assert.strictEqual(store.getUser(`k${k}`)?.filter[0], latest, `k${k}`)
    }
    await store.close()
    await writer

    // Restarted: resumes from that position (no bootstrap) and ends equal to Redis.
    await host.start('sync')
    await until('the restarted sync current', async () => {
      const h = await health()
      return h.state === 'following' && h.appliedSeq === base + TOTAL
    })
    const metrics = await (await fetch(`${host.syncUrl}/metrics`)).text()
    t.assert.match(metrics, /^filterd_replica_bootstraps_total 0$/m, 'resumed, not bootstrapped')
    t.assert.match(
      metrics,
      new RegExp(`^filterd_replica_applied_records_total ${TOTAL - applied}$`, 'm'),
      'each remaining record applied once'
    )
    await host.stop()
    const after = Store.open(join(host.dir, 'db'))
    t.after(async () => {
      await after.close()
    })
    t.assert.strictEqual(after.replicaPosition()!.seq, base + TOTAL)
    for (const db of ['users', 'lists'] as const) {
      const inRedis = new Map<string, unknown>()
      for (const [key, raw] of Object.entries(await r.hgetallBuffer(settings.keys.hash[db]))) {
        const { value } = parseStored(raw)
        if (value !== undefined) inRedis.set(key, value)
      }
      t.assert.deepStrictEqual(new Map([...after.entries(db)].map(({ key, value }) => [key, value])), inRedis, db)
    }
  }
)

test(
  'under filterd all with Redis configured, the sync role runs and reports replication on /health and /metrics',
  { timeout: 90_000 },
  async (t: TestContext) => {
    const { dir, cleanup } = makeTempDir('filterd-all-redis-')
    const redis = await startRedis()
    t.after(async () => {
      await redis.stop()
      cleanup()
    })
    const ports = await demoPorts()
    // The demo config with Redis, as docs/operations-redis.md has an operator enable it.
    const demo = demoConfig(dir, ports).replace(
      'common:\n',
      `common:\n  redis-ip: 127.0.0.1\n  redis-port: ${redis.port}\n`
    )
    const config = join(dir, 'demo.yaml')
    writeFileSync(config, demo)
    const child = spawn(process.execPath, [FILTERD, 'all', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    child.stderr.resume()
    t.after(async () => {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    })
    while (!out.includes('Stop with Ctrl-C.')) {
      if (child.exitCode !== null) throw new Error(`filterd all exited early:\n${out}`)
      await once(child.stdout, 'data')
    }
    t.assert.match(
      out,
      new RegExp(
        `^  sync +sync http 127\\.0\\.0\\.1:${ports.sync} \\(/health, /metrics, /stats/segments\\) following 127\\.0\\.0\\.1:${redis.port}`,
        'm'
      )
    )
    const sync = `http://127.0.0.1:${ports.sync}`
    await until('the replica following', async () => (await json(`${sync}/health`)).body?.state === 'following')
    // An API write goes through Redis and comes back through the sync role.
    const before = (await json(`${sync}/health`)).body.appliedSeq as number
    const put = await fetch(`http://127.0.0.1:${ports.api}/users/alice`, {
      method: 'PUT',
      body: JSON.stringify({ ip: ['198.51.100.9'] }),
      headers: { 'content-type': 'application/json' }
    })
    t.assert.strictEqual(put.status, 200, await put.text())
    await until('the write applied', async () => (await json(`${sync}/health`)).body.appliedSeq > before)
    const h = await json(`${sync}/health`)
    t.assert.strictEqual(h.status, 200)
    t.assert.strictEqual(h.body.ok, true)
    t.assert.strictEqual(h.body.lagRecords, 0)
    t.assert.strictEqual(h.body.redis, `127.0.0.1:${redis.port}`)
    const metrics = await (await fetch(`${sync}/metrics`)).text()
    t.assert.match(metrics, /^filterd_replica_state\{state="following"\} 1$/m)
    t.assert.match(metrics, /^filterd_replica_lag_records 0$/m)
    t.assert.match(metrics, /^filterd_replica_lag_seconds [0-9.e-]+$/m)
    t.assert.match(metrics, /^filterd_replica_applied_seq [1-9]\d*$/m)
    // A load balancer's health check in HTTP/1.0 (HAProxy's default httpchk) is answered: node:http under `auto`.
    t.assert.match(
      await rawExchange(ports.sync!, 'GET /health HTTP/1.0\r\n\r\n'),
      /^HTTP\/1\.1 200 [^]*"state":"following"/
    )
    // Redis away: the health endpoint says so with a 503.
    await redis.kill()
    await until('health reporting Redis down', async () => (await json(`${sync}/health`)).body?.state === 'redis-down')
    t.assert.strictEqual((await json(`${sync}/health`)).status, 503)
    t.assert.match(await (await fetch(`${sync}/metrics`)).text(), /^filterd_replica_state\{state="redis-down"\} 1$/m)
  }
)
