/**
 * Several hosts on one Redis, three measurements in one run:
 *
 *   1. write → enforcement, end to end: host A runs the real sync and api roles, host B the real
 *      sync and dns roles (daemons, each host with its own LMDB folder; in network namespaces when
 *      this process may create them, else on loopback addresses: sync/testing/topology.ts). WRITES times, one
 *      after another, `PUT /users/bench` on A's api role blacklists a new name for the user owning
 *      the client address the benchmark asks from; the clock starts when A's 200 arrives and stops
 *      when B's DNS server, asked for that name over UDP again and again, answers with the block
 *      address. So it includes B's follower applying the record and B's DNS server noticing the new
 *      generation (GENERATION_CHECK_MS, 10 ms). p50/p99/max.
 *   2. sustained API writes/s over HTTP (PUT /users/{id} with an address and a filter, CONNECTIONS
 *      keep-alive connections): the single-host server (LMDB commit) and the same server writing
 *      through Redis, alternating for SECONDS each, same process, same machine.
 *   3. replica apply rate when bootstrapping USERS users (Redis filled directly, then a fresh
 *      replica bootstraps from it): users per second.
 *
 *   node dist/bench/sync/replica.bench.js [writes, default 1000] [seconds, default 5] [connections, default 16] [users, default 1000000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { silentLogger } from '../../engine/log/index.js'
import { loadTaxonomy } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { openStatsDb } from '../../engine/stats/index.js'
import { Store } from '../../engine/store/index.js'
import { Follower } from '../../engine/replica/follower.js'
import { storedValue } from '../../engine/replica/redis.js'
import { linkStore, testSettings } from '../../engine/testing/replica.js'
import { until } from '../../engine/testing/wait.js'
import { startRedis } from '../../engine/testing/redis.js'
import { ask, firstA } from '../../engine/testing/dns.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { startStubResolver } from '../../engine/upstream-stub/index.js'
import { createTopology, defineHost, type Host } from '../../sync/testing/topology.js'
import { createApiServer } from '../../api/server.js'
import { configFrom, writeTaxonomy } from '../../api/testing/fixtures.js'
import { keepAliveLoad } from '../common/load.js'

const WRITES = Number(process.argv[2] ?? 1000)
const SECONDS = Number(process.argv[3] ?? 5)
const CONNECTIONS = Number(process.argv[4] ?? 16)
const USERS = Number(process.argv[5] ?? 1_000_000)

const root = mkdtempSync(join(tmpdir(), 'filterd-sync-bench-'))
const BLOCK = '192.0.2.80' // proxy.blockpage-ip of the hosts sync/testing/topology.ts defines
// Hosts A and B of the first measurement, and Redis reachable from both.
const topo = createTopology(2)
const redis = await startRedis({ bind: topo.redisBind.join(' ') })
const logger = silentLogger()

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

async function latency(): Promise<void> {
  const hostsRoot = join(root, 'hosts')
  // Every name B does not block is answered at once by this upstream, so a query asked before B
  // enforces the write comes back in well under a millisecond and the next one is sent.
  const upstream = await startStubResolver({ host: '0.0.0.0', port: await releasedPort() })
  const hosts: Host[] = []
  try {
    for (const i of [1, 2]) {
      hosts.push(
        await defineHost(topo, i, hostsRoot, redis.port, {
          common: { 'log-level': 'warn' },
          dnscache: { forward: [`${topo.redisAddressFor(i)}:${upstream.port}`] }
        })
      )
    }
    const [a, b] = hosts as [Host, Host]
    await a.start('sync')
    await a.start('api')
    await b.start('sync')
    await b.start('dns')
    const from = topo.clientAddress(b.index)
    const put = async (name: string): Promise<void> => {
      const res = await fetch(`${a.apiUrl}/users/bench`, {
        method: 'PUT',
        body: JSON.stringify({ ip: [from], blacklist: [name] }),
        headers: { 'content-type': 'application/json' }
      })
      if (res.status !== 200) throw new Error(`PUT /users/bench answered ${res.status}: ${await res.text()}`)
      await res.arrayBuffer()
    }
    const answer = async (name: string): Promise<string | undefined> =>
      firstA(await ask(b.dnsPort, name, 'A', { host: b.address, from }))
    await put('warmup.example')
    await until('B enforcing the first write', async () => (await answer('warmup.example')) === BLOCK, 60_000)
    const samples: number[] = []
    let queries = 0
    for (let i = 0; i < WRITES; i++) {
      const name = `d${i}.example`
      await put(name)
      const t0 = performance.now()
      for (;;) {
        queries++
        if ((await answer(name)) === BLOCK) break
        if (performance.now() - t0 > 30_000) throw new Error(`B did not enforce write ${i} within 30 s`)
      }
      samples.push(performance.now() - t0)
    }
    samples.sort((x, y) => x - y)
    console.log(
      `write→enforcement (PUT on A's api role answered 200 → B's dns role answers blocked; ${topo.kind}), ${WRITES} writes: p50 ${pct(samples, 0.5).toFixed(2)} ms, p99 ${pct(samples, 0.99).toFixed(2)} ms, max ${samples.at(-1)!.toFixed(2)} ms (${(queries / WRITES).toFixed(1)} queries per write)`
    )
  } finally {
    await Promise.all(
      hosts.map(async (h) => {
        await h.stop()
      })
    )
    await upstream.close()
  }
}

async function throughput(): Promise<void> {
  const start = async (name: string, link: boolean): Promise<{ port: number; close: () => Promise<void> }> => {
    const dir = join(root, name)
    writeTaxonomy(join(dir, 'cats'))
    const config = configFrom(
      dir,
      `datafiles:\n  cats: ${join(dir, 'cats')}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}`
    )
    const store = Store.open(config.common.db)
    const linked = link
      ? await linkStore(store, testSettings(redis.host, redis.port, `tp-${name}:`), logger)
      : undefined
    const stats = openStatsDb(join(dir, 'statsdb'))
    const api = createApiServer({
      store,
      taxonomy: loadTaxonomy(config.datafiles.cats, 'en'),
      categories: new CategoryDb(store),
      config,
      logger,
      impl: 'node',
      stats: { db: stats, timezone: 'UTC' }
    })
    const { port } = await api.listen('127.0.0.1', 0)
    return {
      port,
      close: async () => {
        await api.close()
        await linked?.close()
        await stats.close()
        await store.close()
      }
    }
  }
  let n = 0
  const request = (): string => {
    const id = `u${n++ % 10_000}`
    const body = JSON.stringify({ ip: [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`], filter: [1] })
    return `PUT /users/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  }
  const single = await start('single', false)
  const shared = await start('redis', true)
  const rounds: Array<[number, number]> = []
  for (let r = 0; r < 3; r++) {
    const s = await keepAliveLoad({ port: single.port, seconds: SECONDS, connections: CONNECTIONS, request })
    const x = await keepAliveLoad({ port: shared.port, seconds: SECONDS, connections: CONNECTIONS, request })
    if (s.non2xx > 0 || x.non2xx > 0) console.log(`  non-2xx answers: single ${s.non2xx}, redis ${x.non2xx}`)
    rounds.push([s.rps, x.rps])
  }
  const med = (i: 0 | 1): number => rounds.map((r) => r[i]).sort((p, q) => p - q)[1]!
  console.log(
    `API writes/s (PUT /users/{id}, ${CONNECTIONS} connections, median of 3 × ${SECONDS} s): single host (LMDB) ${med(0).toFixed(0)}, through Redis ${med(1).toFixed(0)} (${(med(1) / med(0)).toFixed(2)}×)`
  )
  await single.close()
  await shared.close()
}

async function bootstrap(): Promise<void> {
  const prefix = 'boot:'
  const settings = testSettings(redis.host, redis.port, prefix)
  const r = new Redis({ host: redis.host, port: redis.port })
  const fillStart = performance.now()
  for (let i = 0; i < USERS; i += 10_000) {
    const users: Array<string | Buffer> = []
    const ips: Array<string | Buffer> = []
    for (let k = i; k < Math.min(USERS, i + 10_000); k++) {
      const ip = `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`
      users.push(
        `user${k}`,
        storedValue(0, {
          name: `user${k}`,
          safesearch: 'off',
          safeyoutube: 'off',
          status: 'enabled',
          filter: [1, 2],
          ip: [ip]
        })
      )
      ips.push(ip, storedValue(0, `user${k}`))
    }
    await r.hset(settings.keys.hash.users, ...users)
    await r.hset(settings.keys.hash.ips, ...ips)
  }
  await r.multi().set(settings.keys.seq, 0).set(settings.keys.epoch, 'init:bench').exec()
  const fillMs = performance.now() - fillStart
  const store: Store = Store.open(join(root, 'boot'))
  const f = new Follower(store, settings, { logger })
  const t0 = performance.now()
  f.start()
  await until(
    'bootstrap',
    () => store.replicaState() === 'following' && store.replicaPosition() !== undefined,
    30 * 60_000
  )
  const ms = performance.now() - t0
  console.log(
    `bootstrap of ${USERS} users (+ ${USERS} address keys) into a fresh replica: ${(ms / 1000).toFixed(1)} s, ${(USERS / (ms / 1000)).toFixed(0)} users/s (Redis filled in ${(fillMs / 1000).toFixed(1)} s)`
  )
  if (store.userCount() !== USERS) throw new Error(`replica holds ${store.userCount()} users`)
  await f.close()
  await store.close()
  r.disconnect()
}

try {
  console.log(`node ${process.version}, redis-server on 127.0.0.1:${redis.port} (appendonly yes, appendfsync everysec)`)
  await latency()
  await throughput()
  await bootstrap()
} finally {
  await redis.stop()
  topo.cleanup()
  rmSync(root, { recursive: true, force: true })
}
