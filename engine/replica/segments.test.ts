/**
 * Segments between hosts (engine/replica/segments.ts, segment-fetch.ts) against a real redis-server and
 * a real HTTP listener, in one process: two hosts' files counted once on two report stores; Redis holds
 * metadata only (no row); a segment fetched twice counted once; a corrupt transfer and a half-written
 * temporary file refused and fetched again; a report store away past the retention reports the gap;
 * the serving route's token check; several segments applied in one transaction, a duplicate among
 * them; a batch with a segment that cannot be applied, applied one by one. The multi-host test with
 * faults across processes is sync/segments-netns.test.ts.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test, type TestContext } from 'node:test'
import type { Redis } from 'ioredis'
import { createHttpServer } from '../http/index.js'
import type { QueryLogRecord } from '../querylog/index.js'
import { activityByDay, openStatsDb, parseDay, type StatsDb } from '../stats/index.js'
import { ANONYMOUS_USER } from '../querylog/index.js'
import { openSegmentWriter, applySegment, applySegments, sha256File } from '../stats/segment.js'
import { metaGet, partitions } from '../stats/db.js'
import { rawRowsTable } from '../stats/raw-layout.js'
import { ledgerRows, rec, statsTestEnv, writeFiles, type StatsTestEnv } from '../testing/stats/fixtures.js'
import { redisServerAvailable, startRedis, type TestRedis } from '../testing/redis.js'
import { testSettings } from '../testing/replica.js'
import { until } from '../testing/wait.js'
import { connectSharedStore, whenReady } from './redis.js'
import { applySegmentsOnce, segmentGaps, startSegmentApplier, type ApplierContext } from './segment-fetch.js'
import {
  produceSegments,
  segmentKeys,
  segmentSecret,
  serveSegments,
  type ProducerOptions,
  type SegmentKeys
} from './segments.js'
import { shipClosedFiles, statsKeys } from './row-stream.js'

const skip = redisServerAvailable() ? false : 'redis-server is not installed'
let redis: TestRedis
before(async () => {
  if (skip === false) redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

const BASE = Date.now() - 20 * 60_000
function queries(n: number, user = 'alice'): QueryLogRecord[] {
  const out: QueryLogRecord[] = []
  for (let i = 0; i < n; i++)
    out.push(rec(BASE + i * 10, `10.0.0.${i % 3}`, i % 3 === 0 ? null : user, `n${i % 5}.example`))
  return out
}

async function counted(db: StatsDb, user = 'alice'): Promise<[number, number]> {
  const from = parseDay(new Date(BASE).toISOString().slice(0, 10))!
  const to = parseDay(new Date().toISOString().slice(0, 10))!
  const sum = async (u: string): Promise<number> =>
    (await activityByDay(db, u, from, to)).datasets[0]!.data.reduce((x, y) => x + y, 0)
  return [await sum(user), await sum(ANONYMOUS_USER)]
}

let prefixes = 0
interface Fleet {
  keys: SegmentKeys
  prefix: string
  connect(): Promise<Redis>
  /** A producing host: its CSV folder, its segment folder served on a real listener. */
  host(name: string, retentionMs?: number, now?: () => number): Promise<ProducerOptions & { env: StatsTestEnv }>
  /** A report store and its applier context. */
  reports(name: string): Promise<ApplierContext>
}

async function fleet(t: TestContext): Promise<Fleet> {
  const prefix = `sg${process.pid}-${++prefixes}:`
  const settings = testSettings(redis.host, redis.port, prefix)
  const keys = segmentKeys(prefix)
  const connect = async (): Promise<Redis> => {
    const r = connectSharedStore(settings, { commandTimeout: 6000 })
    t.after(() => {
      r.disconnect()
    })
    await whenReady(r, 5000)
    return r
  }
  const root = statsTestEnv(t).root
  return {
    keys,
    prefix,
    connect,
    async host(name, retentionMs = 86_400_000, now) {
      const env = statsTestEnv(t)
      const segDir = join(env.root, 'segments')
      const secret = await segmentSecret(segDir)
      const http = createHttpServer({ impl: 'node' })
      serveSegments(http, segDir, secret)
      const { port } = await http.listen('127.0.0.1', 0)
      const writer = openSegmentWriter()
      t.after(async () => {
        await http.close()
        await writer.close()
      })
      return {
        env,
        host: name,
        statsDir: env.config.stats.dir,
        segDir,
        url: `http://127.0.0.1:${port}`,
        secret,
        retentionMs,
        writer,
        streamKeys: statsKeys(prefix),
        ...(now === undefined ? {} : { now })
      }
    },
    async reports(name) {
      const db = openStatsDb(join(root, name))
      t.after(() => db.close())
      return {
        redis: await connect(),
        keys,
        streamKeys: statsKeys(prefix),
        db,
        timeZone: 'UTC',
        self: name,
        incoming: join(root, name, 'incoming'),
        counters: { fetched: 0, applied: 0, duplicates: 0, failed: 0, rows: 0 }
      }
    }
  }
}

test(
  'two hosts each produce segments; two report stores count every query once; Redis holds no row',
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    const [h1, h2] = [await f.host('h1'), await f.host('h2')]
    await writeFiles(h1.env, queries(3000), 3)
    await writeFiles(h2.env, queries(1500), 2)
    const r = await f.connect()
    t.assert.strictEqual(await produceSegments(r, f.keys, h1), 3000)
    t.assert.strictEqual(await produceSegments(r, f.keys, h2), 1500)
    t.assert.deepStrictEqual(readdirSync(h1.statsDir), [], 'the CSV files are gone once their segments are registered')
    t.assert.strictEqual(readdirSync(join(h1.segDir, 'h1')).length, 3)
    // Redis: metadata only, no field holding rows (every value is one short JSON object).
    for (const v of Object.values(await r.hgetall(f.keys.meta))) t.assert.ok(v.length < 400, v)
    t.assert.strictEqual(await r.exists(statsKeys(f.prefix).stream), 0, 'nothing goes through the old stream')
    for (const name of ['a', 'b']) {
      const ctx = await f.reports(name)
      t.assert.deepStrictEqual(await applySegmentsOnce(ctx), { h1: 3, h2: 2 })
      t.assert.deepStrictEqual(await counted(ctx.db), [3000, 1500])
      // A second pass: nothing new.
      await applySegmentsOnce(ctx)
      t.assert.deepStrictEqual(await counted(ctx.db), [3000, 1500])
      t.assert.strictEqual(ctx.counters.applied, 5)
      t.assert.strictEqual(ctx.counters.fetched, 5)
    }
    t.assert.deepStrictEqual(JSON.parse((await r.hget(f.keys.applied, 'a'))!), { h1: 3, h2: 2 })
    // Producing again: nothing (the files are gone).
    t.assert.strictEqual(await produceSegments(r, f.keys, h1), 0)
  }
)

test(
  'a segment fetched twice counts once; a corrupt transfer and a half-written one are fetched again',
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    const h1 = await f.host('h1')
    await writeFiles(h1.env, queries(900), 2)
    const r = await f.connect()
    await produceSegments(r, f.keys, h1)
    const ctx = await f.reports('a')
    const [first, second] = await r.zrange(f.keys.index('h1'), 0, -1)
    // The second segment damaged on the serving host: its transfer is refused (size/sha256), nothing applied from it.
    const path = join(h1.segDir, 'h1', second!.slice(3).replace(/\.csv$/, '.parquet'))
    const saved = join(h1.env.root, 'saved.parquet')
    copyFileSync(path, saved)
    truncateSync(path, 100)
    t.assert.deepStrictEqual(await applySegmentsOnce(ctx), { h1: 1 })
    t.assert.strictEqual(ctx.counters.failed, 1)
    t.assert.deepStrictEqual(await counted(ctx.db), [300, 150], 'the first segment only')
    // A transfer killed midway leaves a temporary file: the next pass removes it and fetches again.
    mkdirSync(ctx.incoming, { recursive: true })
    writeFileSync(join(ctx.incoming, '.h1--half.parquet.tmp'), 'PAR1 half')
    copyFileSync(saved, path)
    t.assert.deepStrictEqual(await applySegmentsOnce(ctx), { h1: 2 })
    t.assert.ok(!existsSync(join(ctx.incoming, '.h1--half.parquet.tmp')))
    t.assert.deepStrictEqual(await counted(ctx.db), [600, 300])
    // The first segment registered again under a new seq (as if its mark were lost): fetched, counted once.
    const meta = JSON.parse((await r.hget(f.keys.meta, first!))!) as { seq: number }
    const seq = await r.hincrby(f.keys.hosts, 'h1', 1)
    await r.zadd(f.keys.index('h1'), seq, first!)
    await r.hset(f.keys.meta, first!, JSON.stringify({ ...meta, seq }))
    const before = ctx.counters.fetched
    t.assert.deepStrictEqual(await applySegmentsOnce(ctx), { h1: 3 })
    t.assert.strictEqual(ctx.counters.fetched, before + 1, 'fetched a second time')
    t.assert.strictEqual(ctx.counters.duplicates, 1)
    t.assert.deepStrictEqual(await counted(ctx.db), [600, 300])
    // And applying the same file directly twice: the ledger holds it once.
    const ledger = await ledgerRows(ctx.db)
    t.assert.deepStrictEqual(await applySegment(ctx.db, 'UTC', first!, saved), { kind: 'duplicate' })
    t.assert.strictEqual(await ledgerRows(ctx.db), ledger)
  }
)

test(
  'a report store away past the retention reports the gap and applies what is left',
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    let clock = Date.now()
    const h1 = await f.host('h1', 60_000, () => clock)
    const r = await f.connect()
    const early = await f.reports('early')
    await writeFiles(h1.env, queries(600), 2)
    await produceSegments(r, f.keys, h1)
    await applySegmentsOnce(early)
    // Two hours later: new files; the producer's trim drops the first two segments (metadata and files).
    clock += 2 * 3_600_000
    await writeFiles(h1.env, queries(300, 'bob'), 1)
    await produceSegments(r, f.keys, h1)
    t.assert.deepStrictEqual(
      await r.zrange(f.keys.index('h1'), 0, -1, 'WITHSCORES').then((x) => x.filter((_, i) => i % 2 === 1)),
      ['3']
    )
    t.assert.strictEqual(readdirSync(join(h1.segDir, 'h1')).filter((n) => n.endsWith('.parquet')).length, 1)
    // The store that kept up: no gap. A late one: a gap of 2 segments, reported, and the rest applied.
    await applySegmentsOnce(early)
    t.assert.deepStrictEqual(await segmentGaps(early.db), {})
    const late = await f.reports('late')
    t.assert.deepStrictEqual(await applySegmentsOnce(late), { h1: 3 })
    t.assert.deepStrictEqual(await segmentGaps(late.db), { h1: 2 })
    t.assert.deepStrictEqual(await counted(late.db, 'bob'), [200, 100])
    t.assert.deepStrictEqual(await counted(late.db), [0, 100])
    t.assert.deepStrictEqual(await counted(early.db), [400, 300])
  }
)

test(
  'the segment route serves only the bearer of the token, and 404 past retention',
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    const h1 = await f.host('h1')
    await writeFiles(h1.env, queries(30), 1)
    const r = await f.connect()
    await produceSegments(r, f.keys, h1)
    const [name] = await r.zrange(f.keys.index('h1'), 0, 0)
    const meta = JSON.parse((await r.hget(f.keys.meta, name!))!) as { token: string }
    const url = `${h1.url}/stats/segments/h1/${name!.slice(3).replace(/\.csv$/, '.parquet')}`
    t.assert.strictEqual((await fetch(url)).status, 404)
    t.assert.strictEqual((await fetch(url, { headers: { authorization: 'Bearer 00' } })).status, 404)
    const wrong = await fetch(url, { headers: { authorization: `Bearer ${'0'.repeat(64)}` } })
    t.assert.strictEqual(wrong.status, 404)
    t.assert.strictEqual(((await wrong.json()) as { error: { code: string } }).error.code, 'HTTP_NOT_FOUND')
    const ok = await fetch(url, { headers: { authorization: `Bearer ${meta.token}` } })
    t.assert.strictEqual(ok.status, 200)
    t.assert.strictEqual((await ok.arrayBuffer()).byteLength > 0, true)
    // Past retention (the file removed): 404.
    rmSync(join(h1.segDir, 'h1', name!.slice(3).replace(/\.csv$/, '.parquet')))
    t.assert.strictEqual((await fetch(url, { headers: { authorization: `Bearer ${meta.token}` } })).status, 404)
    const traversal = await fetch(`${h1.url}/stats/segments/../x.parquet`, {
      headers: { authorization: `Bearer ${meta.token}` }
    })
    t.assert.ok(traversal.status === 404 || traversal.status === 400)
  }
)

test(
  'upgrade: chunks left in the old stream are applied, a file the old shipper finished is not made a segment',
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    const h1 = await f.host('h1')
    const r = await f.connect()
    // The old version shipped one file through the stream whole...
    await writeFiles(h1.env, queries(600), 1)
    t.assert.strictEqual(await shipClosedFiles(r, statsKeys(f.prefix), 'h1', h1.statsDir), 601)
    // ...and finished shipping another but stopped before deleting it (progress -1 in Redis).
    await writeFiles(h1.env, queries(300, 'bob'), 1)
    const [left] = readdirSync(h1.statsDir)
    await r.hset(statsKeys(f.prefix).progress, `h1/${left!}`, -1)
    // The new version: that file is deleted, not made a segment; a new file becomes one.
    await produceSegments(r, f.keys, h1)
    t.assert.deepStrictEqual(readdirSync(h1.statsDir), [])
    t.assert.strictEqual(await r.hlen(f.keys.meta), 0)
    await writeFiles(h1.env, queries(90, 'carl'), 1)
    t.assert.strictEqual(await produceSegments(r, f.keys, h1), 90)
    const ctx = await f.reports('a')
    await applySegmentsOnce(ctx)
    t.assert.deepStrictEqual(await counted(ctx.db), [400, 230], 'the stream drained and the segment applied')
    t.assert.deepStrictEqual(await counted(ctx.db, 'carl'), [60, 230])
    t.assert.deepStrictEqual(await counted(ctx.db, 'bob'), [0, 230], 'the finished file was not applied again')
  }
)

test('several segments in one transaction: the one already applied counts once, the others once each, in order', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, queries(900), 3)
  const writer = openSegmentWriter()
  t.after(() => writer.close())
  const names = readdirSync(env.config.stats.dir).sort()
  const segs = []
  for (const n of names) {
    const path = join(env.root, n.replace(/\.csv$/, '.parquet'))
    t.assert.strictEqual((await writer.write(join(env.config.stats.dir, n), path))?.rows, 300)
    segs.push({ name: `h1/${n}`, path })
  }
  const db = openStatsDb(join(env.root, 'reports'))
  t.after(() => db.close())
  t.assert.deepStrictEqual(await applySegment(db, 'UTC', segs[1]!.name, segs[1]!.path), { kind: 'applied', rows: 300 })
  t.assert.deepStrictEqual(await applySegments(db, 'UTC', segs), [
    { kind: 'applied', rows: 300 },
    { kind: 'duplicate' },
    { kind: 'applied', rows: 300 }
  ])
  t.assert.deepStrictEqual(await counted(db), [600, 300])
  t.assert.strictEqual(await ledgerRows(db), 900)
  // Every raw row once (each has its own `created`), and the raw-row sequence counts 900.
  const once = await db.read(async (c) => {
    const union = (await partitions(c)).raw.map((h) => `SELECT created FROM ${rawRowsTable(h)}`).join(' UNION ALL ')
    return (await c.runAndReadAll(`SELECT count(*)::DOUBLE, count(DISTINCT created)::DOUBLE FROM (${union})`))
      .getRows()[0]!
      .map(Number)
  })
  t.assert.deepStrictEqual(once, [900, 900])
  t.assert.strictEqual(await db.read((c) => metaGet(c, 'seq')), 900)
})

test(
  'a segment that passes its checks but cannot be applied: the batch is applied one by one, the segments before it count',
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    const h1 = await f.host('h1')
    await writeFiles(h1.env, queries(900), 3)
    const r = await f.connect()
    await produceSegments(r, f.keys, h1)
    const ctx = await f.reports('a')
    const second = (await r.zrange(f.keys.index('h1'), 0, -1))[1]!
    // The second segment replaced by bytes that are no Parquet, with metadata that matches them: the
    // transfer is accepted, the apply fails.
    const path = join(h1.segDir, 'h1', second.slice(3).replace(/\.csv$/, '.parquet'))
    const saved = join(h1.env.root, 'saved.parquet')
    copyFileSync(path, saved)
    writeFileSync(path, 'not a parquet file')
    const meta = JSON.parse((await r.hget(f.keys.meta, second))!) as Record<string, unknown>
    const bad = { ...meta, bytes: 18, sha256: await sha256File(path) }
    await r.hset(f.keys.meta, second, JSON.stringify(bad))
    t.assert.deepStrictEqual(await applySegmentsOnce(ctx), { h1: 1 })
    t.assert.strictEqual(ctx.counters.failed, 1)
    t.assert.deepStrictEqual(await counted(ctx.db), [200, 100], 'the first segment only, once')
    // Repaired: the next pass applies the second and third, once.
    copyFileSync(saved, path)
    await r.hset(f.keys.meta, second, JSON.stringify(meta))
    t.assert.deepStrictEqual(await applySegmentsOnce(ctx), { h1: 3 })
    t.assert.deepStrictEqual(await counted(ctx.db), [600, 300])
    t.assert.strictEqual(await ledgerRows(ctx.db), 900)
  }
)

test(
  "a registered segment wakes the report host's applier at once, long before its interval",
  { skip },
  async (t: TestContext) => {
    const f = await fleet(t)
    const h1 = await f.host('h1')
    const ctx = await f.reports('live')
    const applier = startSegmentApplier(ctx, { intervalMs: 3_600_000 })
    t.after(() => applier.close())
    // The first pass runs at start, with nothing registered; after it only an announcement can wake the applier.
    await until('the subscription', async () => (await ctx.redis.pubsub('NUMSUB', f.keys.registered))[1] === 1)
    await writeFiles(h1.env, queries(300), 1)
    t.assert.strictEqual(await produceSegments(await f.connect(), f.keys, h1), 300)
    await until('the segment applied', async () => (await counted(ctx.db))[0] === 200, 30_000, 100)
    t.assert.deepStrictEqual(await counted(ctx.db), [200, 100])
  }
)
