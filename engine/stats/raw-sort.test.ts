import { test, type TestContext } from 'node:test'
import { openStatsDb, type StatsDb } from './db.js'
import { rawAddrsTable, rawHostsTable, rawRowsTable, rawUsersTable } from './raw-layout.js'
import { setFailpoint } from '../failpoints.js'
import { NOW, at, metaOf, partitionsOf, rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'
import { importClosedFiles } from './importer.js'
import { activityByHour, rawLastHour, topDomains } from './reports.js'
import { ReportTime, parseDay } from './time.js'
import { rangeStarts, rawSortSettled, sortRawHour, sortRawHours, userRanges, type RangeStart } from './raw-sort.js'
import type { QueryLogRecord } from '../querylog/index.js'
import { exportParquetHours } from './parquet.js'
import { join } from 'node:path'

const HOUR = Math.floor(at('2024-05-15', '11:00') / 3_600_000)
const USERS = ['dave', 'alice', 'carol', 'bob', 'erin']
const time = new ReportTime('UTC')

/** `n` queries in the hour 11:00-12:00 of 2024-05-15, users taking turns, several in the same ms (seq orders them). */
function queries(n: number, from: number): QueryLogRecord[] {
  return Array.from({ length: n }, (_, i) =>
    rec(
      at('2024-05-15', '11:00') + (from + i) * 1000 - (i % 3),
      `10.0.0.${i % 7}`,
      USERS[i % USERS.length]!,
      `n${from + i}.example`
    )
  )
}

/**
 * The table's user ids and arrival numbers in storage (row-id) order; a query's arrival number is in its
 * name (`n<k>.example`, the k-th query, numbered from 1 as the raw-row sequence).
 */
async function stored(db: StatsDb, hour = HOUR): Promise<Array<[number, number]>> {
  return await db.read(async (c) =>
    (
      await c.runAndReadAll(
        `SELECT r.uid, h.name FROM ${rawRowsTable(hour)} r JOIN ${rawHostsTable(hour)} h ON h.id = r.hid ORDER BY r.rowid`
      )
    )
      .getRows()
      .map((r) => [Number(r[0]), Number(/^n(\d+)\./.exec(String(r[1]))![1]) + 1])
  )
}

/** Every user's raw report, top domains and hourly activity: what the sort must not change. */
async function answers(db: StatsDb): Promise<string> {
  const day = parseDay('2024-05-15')!
  const out: unknown[] = []
  for (const u of USERS)
    out.push(
      await rawLastHour(db, time, u, NOW),
      await topDomains(db, u, day, day, 'all'),
      await activityByHour(db, time, u, day, day)
    )
  return JSON.stringify(out)
}

/** Each id of `column` (hid, aid) in order of first use in storage order, over the first `n` rows. */
async function firstUses(db: StatsDb, column: string, n: number, hour = HOUR): Promise<number[]> {
  return await db.read(async (c) =>
    (
      await c.runAndReadAll(
        `SELECT ${column} FROM (SELECT ${column}, min(rowid) AS f FROM ${rawRowsTable(hour)} WHERE rowid < ${n} GROUP BY ${column}) ORDER BY f`
      )
    )
      .getRows()
      .map((r) => Number(r[0]))
  )
}

/** The hour's Parquet export (engine/stats/parquet.ts), read back: it names rows by their strings, whatever the ids. */
async function parquetRows(t: TestContext, db: StatsDb): Promise<string> {
  const dir = join(statsTestEnv(t).root, 'parquet')
  const [file] = await exportParquetHours(db, dir, at('2024-05-15', '13:00'))
  return await db.read(async (c) =>
    JSON.stringify(
      (
        await c.runAndReadAll(
          `SELECT * EXCLUDE (created), epoch_ms(created)::DOUBLE FROM read_parquet('${join(dir, file!)}')`
        )
      ).getRows()
    )
  )
}

const isSorted = (rows: ReadonlyArray<[number, number]>): boolean =>
  rows.every((r, i) => i === 0 || rows[i - 1]![0] < r[0] || (rows[i - 1]![0] === r[0] && rows[i - 1]![1] < r[1]))

test('sorts a raw hour by user: same rows, seq and reports, and rows appended during the sort kept after the sorted ones', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  // The same files into a second store that is never sorted: the answers to match.
  const refEnv = statsTestEnv(t)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => ref.close())
  const first = queries(60, 0)
  const late = queries(15, 60)
  await writeFiles(env, first)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  await writeFiles(refEnv, [...first, ...late])
  await importClosedFiles(ref, refEnv.config.stats.dir, 'UTC', { now: () => NOW })
  t.assert.strictEqual(isSorted(await stored(db)), false, 'imported in arrival order')

  // Rows imported between the sorted copy and the swap (an import beside the sort).
  const n = await sortRawHour(db, HOUR, async () => {
    await writeFiles(env, late)
    await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  })
  t.assert.strictEqual(n, 60)
  const rows = await stored(db)
  t.assert.strictEqual(rows.length, 75)
  t.assert.ok(isSorted(rows.slice(0, 60)), 'the snapshot is sorted by user and arrival')
  t.assert.deepStrictEqual(
    rows.slice(60).map((r) => r[1]),
    [...Array(15).keys()].map((i) => 61 + i),
    'the rows imported meanwhile follow, in their order'
  )
  t.assert.deepStrictEqual(
    rows.map((r) => r[1]).sort((a, b) => a - b),
    [...Array(75).keys()].map((i) => i + 1),
    'every row once'
  )
  t.assert.strictEqual(await metaOf(db, `rawisorted.${HOUR}`), 60)
  // The names' and addresses' ids are renumbered in the sorted rows' order: first used 0, 1, 2, ...
  const inOrder = (ids: number[]): boolean => ids.every((id, i) => id === i)
  t.assert.ok(inOrder(await firstUses(db, 'hid', 60)), 'name ids in sorted order')
  t.assert.ok(inOrder(await firstUses(db, 'aid', 60)), 'address ids in sorted order')
  t.assert.strictEqual(await answers(db), await answers(ref))
  t.assert.deepStrictEqual(await partitionsOf(db), await partitionsOf(ref))

  // The 15 unsorted rows make the hour due again (minRows 10), then nothing is.
  t.assert.strictEqual(await sortRawHours(db, NOW, 10), 1)
  t.assert.ok(isSorted(await stored(db)))
  t.assert.strictEqual(await metaOf(db, `rawisorted.${HOUR}`), 75)
  t.assert.ok(inOrder(await firstUses(db, 'hid', 75)) && inOrder(await firstUses(db, 'aid', 75)), 'renumbered again')
  t.assert.strictEqual(await sortRawHours(db, NOW, 10), 0)
  t.assert.strictEqual(await answers(db), await answers(ref))
  t.assert.strictEqual(await parquetRows(t, db), await parquetRows(t, ref), 'the Parquet export is the same')
  // The users' dictionary is sorted by name too (the raw report's lookup reads it by zone maps), ids kept.
  const dict = await db.read(async (c) =>
    (await c.runAndReadAll(`SELECT name FROM ${rawUsersTable(HOUR)} ORDER BY rowid`)).getRows().map((r) => String(r[0]))
  )
  t.assert.deepStrictEqual(dict, [...USERS].sort())
})

test('the importer sorts finished hours in the background; a copy left by a crash is dropped; an hour being written waits', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  await writeFiles(env, [
    ...queries(40, 0),
    rec(at('2024-05-15', '12:05'), '10.0.0.1', 'zed', 'a.example'),
    rec(at('2024-05-15', '12:06'), '10.0.0.1', 'amy', 'a.example')
  ])
  // A crash between the two steps of a sort left a copy of the hour.
  await db.write((c) => c.run(`CREATE TABLE ${rawRowsTable(HOUR)}__sorted AS SELECT 1 AS x`))
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW, rawSortMinRows: 2 })
  await rawSortSettled(db)
  t.assert.ok(isSorted(await stored(db)), 'the finished hour is sorted')
  t.assert.strictEqual(await metaOf(db, `rawisorted.${HOUR}`), 40)
  const tables = await db.read(async (c) =>
    (await c.runAndReadAll("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '%sorted%'")).getRows()
  )
  t.assert.deepStrictEqual(tables, [], "the crash's copy is gone")
  // 12:00 is the hour being written at NOW: sorted the first time it is due, then not within RAW_SORT_EVERY_MS.
  t.assert.strictEqual(await metaOf(db, `rawisorted.${HOUR + 1}`), 2)
  await writeFiles(env, [
    rec(at('2024-05-15', '12:07'), '10.0.0.1', 'bea', 'b.example'),
    rec(at('2024-05-15', '12:08'), '10.0.0.1', 'abe', 'b.example')
  ])
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW + 60_000, rawSortMinRows: 2 })
  await rawSortSettled(db)
  t.assert.strictEqual(await metaOf(db, `rawisorted.${HOUR + 1}`), 2, 'not again within 10 minutes')
  t.assert.strictEqual(await sortRawHours(db, NOW + 11 * 60_000, 2), 1, 'and again after them')
  t.assert.strictEqual(await metaOf(db, `rawisorted.${HOUR + 1}`), 4)
  t.assert.strictEqual(await rawCount(db), 44)
})

/** Every column of the hour's rows and of its dictionaries, in storage (row-id) order. */
async function tables(db: StatsDb): Promise<string> {
  return await db.read(async (c) => {
    const out: unknown[] = []
    for (const t of [rawRowsTable(HOUR), rawUsersTable(HOUR), rawHostsTable(HOUR), rawAddrsTable(HOUR)])
      out.push((await c.runAndReadAll(`SELECT * FROM ${t} ORDER BY rowid`)).getRows())
    return JSON.stringify(out, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))
  })
}

test('a raw hour sorted in several ranges of users is the same table, row for row, as one whole sort', async (t: TestContext) => {
  // Two rows of each user in each of some milliseconds: rows of equal (uid, created), kept in arrival order.
  const same = Array.from({ length: 40 }, (_, i) =>
    rec(
      at('2024-05-15', '11:30') + Math.floor(i / 10),
      `10.0.0.${i % 4}`,
      USERS[i % USERS.length]!,
      `n${60 + i}.example`
    )
  )
  const all = [...queries(60, 0), ...same]
  const sortedWith = async (chunkRows: string | undefined): Promise<StatsDb> => {
    const env = statsTestEnv(t)
    const db = openStatsDb(env.config.stats.db)
    t.after(() => db.close())
    await writeFiles(env, all)
    await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
    setFailpoint('stats.raw-sort.chunk-rows', chunkRows)
    try {
      t.assert.strictEqual(await sortRawHour(db, HOUR), 100)
    } finally {
      setFailpoint('stats.raw-sort.chunk-rows', undefined)
    }
    return db
  }
  const whole = await sortedWith(undefined)
  const startsWith = async (db: StatsDb, chunkRows: string | undefined): Promise<RangeStart[]> =>
    await db.read(async (c) => {
      setFailpoint('stats.raw-sort.chunk-rows', chunkRows)
      try {
        return await rangeStarts(c, rawRowsTable(HOUR))
      } finally {
        setFailpoint('stats.raw-sort.chunk-rows', undefined)
      }
    })
  t.assert.deepStrictEqual(await startsWith(whole, undefined), [], 'one range')
  // 100 rows of 5 users, 20 each: in ranges of about 20 rows, a range starts at each user but the first.
  const byUser = await sortedWith('20')
  t.assert.deepStrictEqual(await startsWith(byUser, '20'), [{ uid: 1 }, { uid: 2 }, { uid: 3 }, { uid: 4 }])
  // In ranges of about 7 rows, each user's 20 are cut by time too (one user, as behind a NAT, is not one range).
  const byTime = await sortedWith('7')
  const cuts = await startsWith(byTime, '7')
  t.assert.ok(cuts.filter((s) => s.created !== undefined).length >= 5, `cut by time: ${JSON.stringify(cuts)}`)
  // Each range holds about 7 rows (never the whole hour), every row in one of them.
  const sizes = await byTime.read(async (c) => {
    const out: number[] = []
    for (const where of userRanges(cuts))
      out.push(
        Number((await c.runAndReadAll(`SELECT count(*) FROM ${rawRowsTable(HOUR)} r WHERE ${where}`)).getRows()[0]![0])
      )
    return out
  })
  t.assert.strictEqual(
    sizes.reduce((a, b) => a + b),
    100
  )
  t.assert.ok(Math.max(...sizes) <= 14, `range sizes ${sizes.join(', ')}`)
  for (const db of [byUser, byTime]) {
    t.assert.ok(isSorted(await stored(db)))
    t.assert.strictEqual(await tables(db), await tables(whole))
    t.assert.strictEqual(await answers(db), await answers(whole))
  }
})
