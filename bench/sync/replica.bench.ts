/**
 * Several hosts on one Redis (issue #16), three measurements in one run:
 *
 *   1. write → enforcement: host A acknowledges a write (Redis ran the commit script and A's replica
 *      applied it); host B's replica is kept by a real `filterd sync` daemon (its own process); this
 *      process reads B's LMDB as B's DNS server does, and times how long after A's acknowledgement
 *      the written entry is there. WRITES writes, one after another; p50/p99/max. B's DNS server
 *      notices a new generation within its 20 ms poll on top of this.
 *   2. sustained API writes/s over HTTP (PUT /users/{id} with an address and a filter, CONNECTIONS
 *      keep-alive connections): the single-host server (LMDB commit) and the same server writing
 *      through Redis, alternating for SECONDS each, same process, same machine.
 *   3. replica apply rate when bootstrapping USERS users (Redis filled directly, then a fresh
 *      replica bootstraps from it): users per second.
 *
 *   node dist/bench/sync/replica.bench.js [writes, default 1000] [seconds, default 5] [connections, default 16] [users, default 1000000]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
import { linkStore, testSettings, until } from '../../engine/replica/testing.js'
import { startRedis } from '../../engine/testing/redis.js'
import { FILTERD } from '../../engine/testing/daemon.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { createApiServer } from '../../api/server.js'
import { configFrom, writeTaxonomy } from '../../api/testing/fixtures.js'
import { keepAliveLoad } from '../common/load.js'

const WRITES = Number(process.argv[2] ?? 1000)
const SECONDS = Number(process.argv[3] ?? 5)
const CONNECTIONS = Number(process.argv[4] ?? 16)
const USERS = Number(process.argv[5] ?? 1_000_000)

const root = mkdtempSync(join(tmpdir(), 'filterd-sync-bench-'))
const redis = await startRedis()
const logger = silentLogger()

function pct (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

async function latency (): Promise<void> {
  const prefix = 'lat:'
  const settings = testSettings(redis.host, redis.port, prefix)
  const a = Store.open(join(root, 'a'))
  const linkA = await linkStore(a, settings, logger)
  const bDir = join(root, 'b')
  const bConfig = join(root, 'b.json')
  writeFileSync(bConfig, JSON.stringify({
    common: { db: bDir, 'redis-ip': redis.host, 'redis-port': redis.port, 'redis-prefix': prefix, 'log-level': 'warn' },
    sync: { listen: `127.0.0.1:${await releasedPort()}`, log: '-', pid: join(root, 'b-sync.pid') }
  }))
  const child = spawn(process.execPath, [FILTERD, 'sync', '--config', bConfig], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  await once(child, 'message')
  const b = Store.open(bDir, { readOnly: true })
  await a.write((w) => { w.putUser(w.store.newUser('bench')) })
  await until('B following', () => b.getUser('bench') !== undefined, 30_000)
  const samples: number[] = []
  for (let i = 0; i < WRITES; i++) {
    const entry = `d${i}.example`
    await a.write((w) => { w.putList('bench', 'black', [entry]) })
    const t0 = performance.now()
    for (;;) {
      if (b.getList('bench', 'black')[0] === entry) break
      await new Promise((resolve) => setImmediate(resolve))
    }
    samples.push(performance.now() - t0)
  }
  samples.sort((x, y) => x - y)
  console.log(`write→enforcement (A acknowledged → B's replica holds it), ${WRITES} writes: p50 ${pct(samples, 0.5).toFixed(2)} ms, p99 ${pct(samples, 0.99).toFixed(2)} ms, max ${samples.at(-1)!.toFixed(2)} ms`)
  child.kill('SIGTERM')
  await once(child, 'exit')
  await linkA.close()
  await b.close()
  await a.close()
}

async function throughput (): Promise<void> {
  const start = async (name: string, link: boolean): Promise<{ port: number, close: () => Promise<void> }> => {
    const dir = join(root, name)
    writeTaxonomy(join(dir, 'cats'))
    const config = configFrom(dir, `datafiles:\n  cats: ${join(dir, 'cats')}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}`)
    const store = Store.open(config.common.db)
    const linked = link ? await linkStore(store, testSettings(redis.host, redis.port, `tp-${name}:`), logger) : undefined
    const stats = openStatsDb(join(dir, 'statsdb'))
    const api = createApiServer({ store, taxonomy: loadTaxonomy(config.datafiles.cats, 'en'), categories: new CategoryDb(store), config, logger, impl: 'node', stats: { db: stats, timezone: 'UTC' } })
    const { port } = await api.listen('127.0.0.1', 0)
    return { port, close: async () => { await api.close(); await linked?.close(); await stats.close(); await store.close() } }
  }
  let n = 0
  const request = (): string => {
    const id = `u${n++ % 10_000}`
    const body = JSON.stringify({ ip: [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`], filter: [1] })
    return `PUT /users/${id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
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
  console.log(`API writes/s (PUT /users/{id}, ${CONNECTIONS} connections, median of 3 × ${SECONDS} s): single host (LMDB) ${med(0).toFixed(0)}, through Redis ${med(1).toFixed(0)} (${(med(1) / med(0)).toFixed(2)}×)`)
  await single.close()
  await shared.close()
}

async function bootstrap (): Promise<void> {
  const prefix = 'boot:'
  const settings = testSettings(redis.host, redis.port, prefix)
  const r = new Redis({ host: redis.host, port: redis.port })
  const fillStart = performance.now()
  for (let i = 0; i < USERS; i += 10_000) {
    const users: Array<string | Buffer> = []
    const ips: Array<string | Buffer> = []
    for (let k = i; k < Math.min(USERS, i + 10_000); k++) {
      const ip = `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`
      users.push(`user${k}`, storedValue(0, { name: `user${k}`, safesearch: 'off', safeyoutube: 'off', status: 'enabled', filter: [1, 2], ip: [ip] }))
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
  await until('bootstrap', () => store.replicaState() === 'following' && store.replicaPosition() !== undefined, 30 * 60_000)
  const ms = performance.now() - t0
  console.log(`bootstrap of ${USERS} users (+ ${USERS} address keys) into a fresh replica: ${(ms / 1000).toFixed(1)} s, ${(USERS / (ms / 1000)).toFixed(0)} users/s (Redis filled in ${(fillMs / 1000).toFixed(1)} s)`)
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
  rmSync(root, { recursive: true, force: true })
}
