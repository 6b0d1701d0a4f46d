import { test, type TestContext } from 'node:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openStatsDb, partitions, type StatsDb } from './db.js'
import { importClosedFiles } from './importer.js'
import { applyRecords } from './legacy/chunk-path.js'
import { pruneStats } from './maintenance.js'
import { parseRecords } from '../querylog/csv.js'
import { overview } from './overview.js'
import { parseDay, ReportTime } from './time.js'
import { NOW, at, importUnsorted, openTestStatsDb, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'
import type { QueryLogRecord } from '../querylog/index.js'

// Today at NOW: the import leaves the day's names partials in their day table, which `fold` then folds.
const DAY = '2024-05-15'
const time = new ReportTime('UTC')

/** `n` blocks of `name` (categories `cats`) for `user` at `hm`, by the categories `blockedCats` or by the global list. */
function blocks(n: number, hm: string, user: string, name: string, cats: number[], blockedCats: number[]) {
  return Array.from({ length: n }, (_, i) =>
    rec(at(DAY, hm) + i, '10.0.0.1', user, name, {
      reason: blockedCats.length > 0 ? 'category' : 'global-blacklist',
      blockedName: name,
      cats,
      blockedCats
    })
  )
}

/**
 * news.example is in categories 5 and 41: ann filters 41 (two blocks), bo filters 5 (one block). ads.example
 * (category 3) is on the global blacklist (four blocks): no category blocked it.
 */
const ROWS: QueryLogRecord[] = [
  ...blocks(2, '10:00', 'ann', 'news.example', [5, 41], [41]),
  ...blocks(1, '10:10', 'bo', 'news.example', [5, 41], [5]),
  ...blocks(4, '10:20', 'ann', 'ads.example', [3], []),
  rec(at(DAY, '10:30'), '10.0.0.1', 'ann', 'news.example', { cats: [5, 41] })
]

async function topCategories(db: StatsDb): Promise<Array<{ category: number; blocks: number }>> {
  const d = parseDay(DAY)!
  return (await overview(db, time, d, d)).topCategories
}

/** The names partials of the day: in its day table, until `fold`. */
async function inDayTable(db: StatsDb): Promise<boolean> {
  return (await db.read(async (c) => (await partitions(c)).names)).includes(parseDay(DAY)!)
}

/** Compacts and folds the day (over the next day): its names partials go into the week's table. */
async function fold(t: TestContext, db: StatsDb): Promise<void> {
  t.assert.ok(await inDayTable(db))
  await pruneStats(db, 'UTC', at('2024-05-16', '12:00'))
  t.assert.ok(!(await inDayTable(db)), 'the day was folded')
}

test("the overview's blocks by category count the categories that blocked, not every category of a blocked name; through the import and the fold", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openTestStatsDb(t, env)
  await importUnsorted(db, env, ROWS)
  const expected = [
    { category: 41, blocks: 2 },
    { category: 5, blocks: 1 }
  ]
  t.assert.deepStrictEqual(await topCategories(db), expected)
  // The names report still gives the name's categories (last seen) and its blocks, whatever blocked them.
  const d = parseDay(DAY)!
  const top = (await overview(db, time, d, d)).topBlocked
  t.assert.deepStrictEqual(top, [
    { domain: 'ads.example', blocks: 4, requests: 4, cats: [3] },
    { domain: 'news.example', blocks: 3, requests: 4, cats: [5, 41] }
  ])
  await fold(t, db)
  t.assert.deepStrictEqual(await topCategories(db), expected, 'after the fold')
  t.assert.deepStrictEqual((await overview(db, time, d, d)).topBlocked, top, 'after the fold')
})

test('the JS import path (a file an older importer left half-imported) keeps the blocking categories too', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, ROWS)
  const [name] = readdirSync(dir)
  const records: string[][] = []
  const end = parseRecords(readFileSync(join(dir, name!), 'latin1'), 0, 4, records)
  const db = openTestStatsDb(t, env)
  t.assert.ok(await applyRecords(db, 'UTC', name!, 0, end, false, records, () => NOW))
  await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(await topCategories(db), [
    { category: 41, blocks: 2 },
    { category: 5, blocks: 1 }
  ])
})

test('a store of the version before: its names partials (no blockedcats) count for every category of the name, as then; rows imported since count the categories that blocked', async (t: TestContext) => {
  const env = statsTestEnv(t)
  let db = openStatsDb(env.config.stats.db)
  // The version before's day: ann's two blocks by 41, imported into a names table without the column.
  await importUnsorted(db, env, ROWS.slice(0, 2))
  const d = parseDay(DAY)!
  await db.write((c) => c.run(`ALTER TABLE names_${d} DROP COLUMN blockedcats`))
  await db.close()
  db = openTestStatsDb(t, env)
  await importUnsorted(db, env, ROWS.slice(2))
  // ann's two (history) count for 41 and 5; bo's one for 5.
  const expected = [
    { category: 5, blocks: 3 },
    { category: 41, blocks: 2 }
  ]
  t.assert.deepStrictEqual(await topCategories(db), expected)
  await fold(t, db)
  t.assert.deepStrictEqual(await topCategories(db), expected, 'after the fold')
})
