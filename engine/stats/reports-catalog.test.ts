import { test, type TestContext } from 'node:test'
import type { DuckDBConnection } from '@duckdb/node-api'
import { metaPut, openStatsDb, type StatsDb } from './db.js'
import { RETENTION_KEY } from './fold.js'
import { pruneStats } from './maintenance.js'
import { buildMonths } from './month-build.js'
import { activityByDay, detail, rawLastHour } from './reports.js'
import { ReportTime } from './time.js'
import { at, queriesOfDay, rec, statsTestEnv } from '../testing/stats/fixtures.js'
import { APRIL, EARLY, NOW, day, importAt, reports } from '../testing/stats/month-stores.js'

/** `db` seen through connections that note every statement run on them (a report's catalog is per StatsDb object). */
function noting(db: StatsDb): { db: StatsDb; statements: string[] } {
  const statements: string[] = []
  const note = (c: DuckDBConnection): DuckDBConnection =>
    new Proxy(c, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop, target)
        if (typeof v !== 'function') return v
        const f = v as (...args: unknown[]) => unknown
        return prop === 'run' || prop === 'runAndReadAll'
          ? (sql: string, ...rest: unknown[]) => {
              statements.push(sql)
              return f.call(target, sql, ...rest)
            }
          : f.bind(target)
      }
    })
  return { db: { ...db, read: (fn) => db.read((c) => fn(note(c))) }, statements }
}

test('a report is one statement while the tables stay the same, and sees every table made or dropped since', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const refEnv = statsTestEnv(t)
  const store = openStatsDb(env.config.stats.db)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => Promise.all([store.close(), ref.close()]))
  const { db, statements } = noting(store)
  const first = queriesOfDay('2024-04-03', 40)
  await importAt(env, store, first, EARLY)
  await importAt(refEnv, ref, first, EARLY)
  const expected = await reports(ref)
  t.assert.deepStrictEqual(await reports(db), expected)

  // The tables are the same as the last report's: one round trip (the transaction begun with the query), no catalog query.
  statements.length = 0
  await detail(db, 'alice', APRIL, day('2024-06-12'))
  t.assert.strictEqual(statements.length, 1, statements.join('\n'))
  t.assert.match(statements[0]!, /^BEGIN TRANSACTION; SELECT d, host/)
  // No row to carry the check: the fingerprint alone, in the same transaction; still no catalog query.
  statements.length = 0
  const nobody = await detail(db, 'nobody', APRIL, day('2024-06-12'))
  t.assert.ok(nobody.reports.every((r) => r.labels.length === 0))
  t.assert.strictEqual(statements.length, 2, statements.join('\n'))
  t.assert.match(statements[1]!, /^SELECT \(SELECT hash/)

  // A new day's tables made since (an import): the statement's check sees them, the report reads them.
  const second = queriesOfDay('2024-05-20', 40, 3)
  await importAt(env, store, second, EARLY)
  await importAt(refEnv, ref, second, EARLY)
  statements.length = 0
  const afterImport = await reports(ref)
  t.assert.notDeepStrictEqual(afterImport, expected)
  t.assert.deepStrictEqual(await reports(db), afterImport)
  t.assert.ok(
    statements.some((s) => s.startsWith('SELECT t.table_name')),
    'the catalog was read again'
  )

  // Day tables dropped and week tables made (a fold), then month tables made from the weeks: the same answers.
  await pruneStats(store, 'UTC', NOW)
  t.assert.deepStrictEqual(await reports(db), afterImport)
  t.assert.strictEqual(await buildMonths(store, 'UTC', NOW), 4)
  t.assert.deepStrictEqual(await reports(db), afterImport)

  // Retention's first day moved inside a folded table (no table dropped): days before it are left out at once.
  const keep = day('2024-05-01')
  await store.write((c) => metaPut(c, RETENTION_KEY, keep))
  const kept = await activityByDay(db, 'alice', APRIL, day('2024-05-31'))
  t.assert.deepStrictEqual(kept, await activityByDay(noting(store).db, 'alice', APRIL, day('2024-05-31')))
  const before = kept.datasets[0]!.data.slice(0, keep - APRIL)
  t.assert.ok(
    before.every((v) => v === 0),
    'no day before retention'
  )
  t.assert.ok(kept.datasets[0]!.data.some((v) => v > 0))
})

test('the raw report reads its hours without the catalog while they stay the same, and a new hour at once', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const store = openStatsDb(env.config.stats.db)
  t.after(() => store.close())
  const { db, statements } = noting(store)
  const time = new ReportTime('UTC')
  const now = at('2024-05-15', '12:30')
  const minute = (m: number): number => at('2024-05-15', '11:00') + m * 60_000
  const hour11 = [...Array(40).keys()].map((i) =>
    rec(minute(i), '10.0.0.1', i % 2 === 0 ? 'alice' : 'bob', `n${i}.example`)
  )
  await importAt(env, store, hour11, now)
  const before = await rawLastHour(db, time, 'alice', now)
  t.assert.strictEqual(before.data.length, 5) // 11:30 to 11:38, every other minute
  t.assert.deepStrictEqual(await rawLastHour(noting(store).db, time, 'alice', now), before)
  statements.length = 0
  t.assert.deepStrictEqual(await rawLastHour(db, time, 'alice', now), before)
  t.assert.ok(
    statements.every((s) => !s.includes('duckdb_tables() WHERE schema_name') || s.includes('SELECT created::DOUBLE')),
    statements.join('\n')
  )
  t.assert.strictEqual(statements.length, 4, statements.join('\n')) // BEGIN, the rows, their names, ROLLBACK

  // A raw hour made since (12:00): the rows' query sees the change and the hour is read.
  const hour12 = [...Array(6).keys()].map((i) => rec(minute(60 + i), '10.0.0.2', 'alice', `new${i}.example`))
  await importAt(env, store, hour12, now)
  const after = await rawLastHour(db, time, 'alice', now)
  t.assert.strictEqual(after.data.length, 11)
  t.assert.deepStrictEqual(
    after.data.slice(-6).map((r) => r[3]),
    hour12.map((r) => r.name)
  )
  t.assert.deepStrictEqual(after, await rawLastHour(noting(store).db, time, 'alice', now))
})
