/**
 * Statistics through the shared store, exactly once under faults (engine/replica/row-stream.ts), against a
 * real redis-server: two shippers of one host's files at once, a shipper that dies after a chunk
 * reached Redis, a shipper killed between the last chunk and the file's removal, a chunk read twice
 * by one applier, two appliers on one statistics store. Every case ends with each query
 * counted once in the reports.
 */
import { copyFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test, type TestContext } from 'node:test'
import type { Redis } from 'ioredis'
import { unpack } from 'msgpackr'
import type { QueryLogRecord } from '../querylog/index.js'
import { activityByDay, openStatsDb, parseDay, type StatsDb } from '../stats/index.js'
import { ANONYMOUS_USER } from '../querylog/index.js'
import { metaOf, rec, statsTestEnv, writeFiles, type StatsTestEnv } from '../testing/stats/fixtures.js'
import { redisServerAvailable, startRedis, type TestRedis } from '../testing/redis.js'
import { connectSharedStore, whenReady } from './redis.js'
import { applyStatsStream, shipClosedFiles, statsKeys, type StatsKeys } from './row-stream.js'
import { testSettings } from '../testing/replica.js'

const skip = redisServerAvailable() ? false : 'redis-server is not installed'
let redis: TestRedis
before(async () => {
  if (skip === false) redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

let prefixes = 0
function setup(t: TestContext): { keys: StatsKeys; connect: () => Promise<Redis> } {
  const settings = testSettings(redis.host, redis.port, `st${process.pid}-${++prefixes}:`)
  const connect = async (): Promise<Redis> => {
    const r = connectSharedStore(settings, { commandTimeout: 6000 })
    t.after(() => {
      r.disconnect()
    })
    await whenReady(r, 5000)
    return r
  }
  return { keys: statsKeys(`st${process.pid}-${prefixes}:`), connect }
}

// Applied with the real clock (retention), so the queries are recent: the last 20 minutes.
const BASE = Date.now() - 20 * 60_000
function queries(n: number): QueryLogRecord[] {
  const out: QueryLogRecord[] = []
  for (let i = 0; i < n; i++)
    out.push(rec(BASE + i * 10, `10.0.0.${i % 3}`, i % 3 === 0 ? null : 'alice', `n${i % 5}.example`))
  return out
}
const aliceOf = (n: number): number => n - Math.ceil(n / 3)
/** Records shipped (and applied) for `rows` queries in `files` files: each file's header line travels with its first chunk. */
const records = (rows: number, files: number): number => rows + files

/** Requests in `db`'s reports over the days the queries span: [alice, anonymous]. */
async function counted(db: StatsDb): Promise<[number, number]> {
  const from = parseDay(new Date(BASE).toISOString().slice(0, 10))!
  const to = parseDay(new Date().toISOString().slice(0, 10))!
  const sum = async (user: string): Promise<number> =>
    (await activityByDay(db, user, from, to)).datasets[0]!.data.reduce((x, y) => x + y, 0)
  return [await sum('alice'), await sum(ANONYMOUS_USER)]
}

/** Rows in the stream, and each chunk's `<name>@<from>` (a chunk shipped twice would show twice). */
async function streamRows(r: Redis, keys: StatsKeys): Promise<{ rows: number; chunks: string[] }> {
  let rows = 0
  const chunks: string[] = []
  for (const [, fields] of await r.xrangeBuffer(keys.stream, '-', '+')) {
    const f = new Map<string, Buffer>()
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!)
    rows += (unpack(f.get('rows')!) as unknown[]).length
    chunks.push(`${f.get('name')!.toString()}@${f.get('from')!.toString()}`)
  }
  return { rows, chunks }
}

/** Applies the stream to `db` until its saved position is the stream's last entry; the rows applied. */
async function drain(r: Redis, keys: StatsKeys, db: StatsDb): Promise<number> {
  const last = (await r.xrevrange(keys.stream, '+', '-', 'COUNT', 1))[0]?.[0]
  let total = 0
  while (`${await metaOf(db, 'redis.stats.ms')}-${await metaOf(db, 'redis.stats.seq')}` !== last)
    total += await applyStatsStream(r, keys, db, 'UTC', 50)
  return total
}

function openDb(t: TestContext, env: StatsTestEnv, name: string): StatsDb {
  const db = openStatsDb(join(env.root, name))
  t.after(() => db.close())
  return db
}

test(
  'two shippers at once, and a shipper killed before it removed a shipped file, ship each row once',
  { skip },
  async (t: TestContext) => {
    const env = statsTestEnv(t)
    const { keys, connect } = setup(t)
    const dir = env.config.stats.dir
    await writeFiles(env, queries(12_000), 2) // two files of 6,000 rows: two chunks each (5,000 rows a chunk)
    const files = readdirSync(dir).sort()
    t.assert.strictEqual(files.length, 2)
    const kept = join(env.root, 'kept.csv')
    copyFileSync(join(dir, files[0]!), kept)
    // The same host's files shipped by two processes at once (say, two sync roles started by mistake).
    const [c1, c2] = [await connect(), await connect()]
    const [x, y] = await Promise.all([shipClosedFiles(c1, keys, 'h1', dir), shipClosedFiles(c2, keys, 'h1', dir)])
    t.diagnostic(`the two shippers shipped ${x} and ${y} records`)
    t.assert.strictEqual(x + y, records(12_000, 2))
    t.assert.deepStrictEqual(readdirSync(dir), [], 'shipped files are removed')
    const r = await connect()
    const first = await streamRows(r, keys)
    t.assert.strictEqual(first.rows, records(12_000, 2))
    t.assert.strictEqual(new Set(first.chunks).size, first.chunks.length, 'no chunk in the stream twice')
    // A shipper killed after the file's last chunk reached Redis but before it removed the file: the
    // next run finds the file done in Redis, ships nothing and removes it.
    copyFileSync(kept, join(dir, files[0]!))
    t.assert.strictEqual(await shipClosedFiles(await connect(), keys, 'h1', dir), 0)
    t.assert.deepStrictEqual(readdirSync(dir), [])
    t.assert.strictEqual((await streamRows(r, keys)).rows, records(12_000, 2))

    const db = openDb(t, env, 'reports')
    t.assert.strictEqual(await drain(r, keys, db), records(12_000, 2))
    t.assert.deepStrictEqual(await counted(db), [aliceOf(12_000), 12_000 - aliceOf(12_000)])
  }
)

test(
  'a shipper that dies after a chunk reached Redis resumes from the recorded offset',
  { skip },
  async (t: TestContext) => {
    const env = statsTestEnv(t)
    const { keys, connect } = setup(t)
    const dir = env.config.stats.dir
    await writeFiles(env, queries(12_000), 1) // one file, three chunks
    // The first shipper's connection breaks right after its first chunk's script ran (the reply lost).
    const dying = await connect()
    await shipClosedFiles(dying, keys, 'probe', join(env.root, 'none')) // defines the ship script on that connection
    let calls = 0
    const failing = new Proxy(dying, {
      get(target, prop, receiver) {
        if (prop === 'filterdShipStats') {
          return async (...args: Array<string | Buffer | number>): Promise<number> => {
            const reply = await (
              target as unknown as { filterdShipStats: (...a: typeof args) => Promise<number> }
            ).filterdShipStats(...args)
            if (++calls === 1) throw new Error('connection lost after the script ran')
            return reply
          }
        }
        const v = Reflect.get(target, prop, receiver) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
    await t.assert.rejects(shipClosedFiles(failing, keys, 'h2', dir), /connection lost/)
    t.assert.strictEqual(readdirSync(dir).length, 1, 'the file stays until it is shipped whole')
    t.assert.strictEqual(
      (await streamRows(await connect(), keys)).rows,
      5000,
      'the first chunk (5,000 records) is in Redis'
    )
    // The next run (another connection, as after a restart) ships the rest, not the first chunk again.
    t.assert.strictEqual(await shipClosedFiles(await connect(), keys, 'h2', dir), records(12_000, 1) - 5000)
    t.assert.deepStrictEqual(readdirSync(dir), [])
    const r = await connect()
    const { rows, chunks } = await streamRows(r, keys)
    t.assert.strictEqual(rows, records(12_000, 1))
    t.assert.deepStrictEqual(new Set(chunks).size, chunks.length, 'no chunk in the stream twice')
    t.assert.strictEqual(chunks.length, 3)
    const db = openDb(t, env, 'reports')
    t.assert.strictEqual(await drain(r, keys, db), records(12_000, 1))
    t.assert.deepStrictEqual(await counted(db), [aliceOf(12_000), 12_000 - aliceOf(12_000)])
  }
)

test(
  'a chunk read twice by one applier, or by two appliers at once, is counted once',
  { skip },
  async (t: TestContext) => {
    const env = statsTestEnv(t)
    const { keys, connect } = setup(t)
    const dir = env.config.stats.dir
    await writeFiles(env, queries(3000), 3)
    t.assert.strictEqual(await shipClosedFiles(await connect(), keys, 'h3', dir), records(3000, 3))
    const r = await connect()
    const db = openDb(t, env, 'reports')
    t.assert.strictEqual(await drain(r, keys, db), records(3000, 3))
    t.assert.deepStrictEqual(await counted(db), [2000, 1000])
    // The applier's stream position lost (a crash before it was saved, a restored backup): it reads
    // the whole stream again, and the importer's ledger refuses every chunk it applied.
    await db.write(async (c) => {
      await c.run("DELETE FROM meta WHERE key IN ('redis.stats.ms', 'redis.stats.seq')")
    })
    t.assert.strictEqual(await drain(r, keys, db), 0)
    t.assert.deepStrictEqual(await counted(db), [2000, 1000])
    // Two appliers on one store at once (two api roles on one host): each chunk lands once.
    const other = openDb(t, env, 'reports2')
    const [c1, c2] = [await connect(), await connect()]
    const [p, q] = await Promise.all([drain(c1, keys, other), drain(c2, keys, other)])
    t.assert.strictEqual(p + q, records(3000, 3))
    t.assert.deepStrictEqual(await counted(other), [2000, 1000])
  }
)
