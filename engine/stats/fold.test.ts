/** Folds of finished days into week tables: reports unchanged, failures, the month tables of the version before. */
import { test, type TestContext } from 'node:test'
import { FOLD_EVERY_MS, foldDays } from './fold.js'
import { pruneStats } from './maintenance.js'
import { at, partitionsOf, queriesOfDay } from '../testing/stats/fixtures.js'
import { DAYS, EARLY, NOW, W1, W2, day, importAt, reports, twoStores, weeks } from '../testing/stats/fold-stores.js'
import { setFailpoint } from '../failpoints.js'

// Every day due folds in one prune here (a step continues while it lasts under this), however loaded the machine.
setFailpoint('stats.fold.step-ms', '600000')

test('a fold changes no report: week tables and day tables read together give what the day tables gave', async (t: TestContext) => {
  const { env, db, refEnv, ref } = twoStores(t)
  for (const [i, d] of DAYS.entries()) {
    await importAt(env, db, queriesOfDay(d, 60, i), EARLY)
    await importAt(refEnv, ref, queriesOfDay(d, 60, i), EARLY)
  }
  const before = await reports(db)
  t.assert.deepStrictEqual(before, await reports(ref))
  t.assert.deepStrictEqual((await partitionsOf(db)).names, DAYS.map(day))
  // At NOW every day but the 15th has been over for more than an hour: the 28th into its week, the 30th to the 2nd into the next.
  await pruneStats(db, 'UTC', NOW)
  t.assert.deepStrictEqual(await weeks(db), { hours: [W1, W2], names: [W1, W2] })
  t.assert.deepStrictEqual((await partitionsOf(db)).hours, [day('2024-05-15')])
  t.assert.deepStrictEqual((await partitionsOf(db)).names, [day('2024-05-15')])
  // The range spans two week tables and a day table.
  t.assert.deepStrictEqual(await reports(db), before)
  t.assert.ok((before[0] as { datasets: Array<{ data: number[] }> }).datasets[0]!.data.some((v) => v > 0))

  // A late file for a folded day (2024-05-02) lands in a day table beside its week table: read together.
  const late = queriesOfDay('2024-05-02', 30, 9)
  await importAt(env, db, late, NOW + 60_000)
  await importAt(refEnv, ref, late, EARLY)
  t.assert.deepStrictEqual((await partitionsOf(db)).names, [day('2024-05-02'), day('2024-05-15')])
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // Within FOLD_EVERY_MS of the last fold it waits; after, it is folded into its week (the week rewritten).
  await pruneStats(db, 'UTC', NOW + 120_000)
  t.assert.deepStrictEqual((await partitionsOf(db)).names, [day('2024-05-02'), day('2024-05-15')])
  await pruneStats(db, 'UTC', NOW + FOLD_EVERY_MS + 120_000)
  t.assert.deepStrictEqual((await partitionsOf(db)).names, [day('2024-05-15')])
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
})

test('a fold that fails before its commit loses and doubles nothing; repeated, it folds once', async (t: TestContext) => {
  const { env, db, refEnv, ref } = twoStores(t)
  for (const [i, d] of DAYS.entries()) {
    await importAt(env, db, queriesOfDay(d, 40, i), EARLY)
    await importAt(refEnv, ref, queriesOfDay(d, 40, i), EARLY)
  }
  const expected = await reports(ref)
  const parts = await partitionsOf(db)
  // Fails inside the transaction of a day, after the week table was made and the day tables dropped.
  for (const failAt of [day('2024-04-28'), day('2024-04-30')]) {
    const fold = db.write((c) =>
      foldDays(db, c, 'UTC', NOW, {
        hook: (d) => {
          if (d === failAt) throw new Error('interrupted')
        }
      })
    )
    await t.assert.rejects(fold, /interrupted/)
    t.assert.deepStrictEqual(await reports(db), expected)
  }
  // The first attempt failed on the 28th: nothing folded. The second (the failed round goes on) folded the 28th and failed on the 30th.
  t.assert.deepStrictEqual(await weeks(db), { hours: [W1], names: [W1] })
  t.assert.deepStrictEqual((await partitionsOf(db)).hours, parts.hours.slice(1))
  // Repeated: the rest folds, and repeating once more changes nothing.
  for (let i = 0; i < 2; i++) {
    await db.write((c) => foldDays(db, c, 'UTC', NOW + i * 2 * FOLD_EVERY_MS))
    t.assert.deepStrictEqual(await weeks(db), { hours: [W1, W2], names: [W1, W2] })
    t.assert.deepStrictEqual((await partitionsOf(db)).hours, [day('2024-05-15')])
    t.assert.deepStrictEqual(await reports(db), expected)
  }
})

test('month tables of the version before are read beside week tables and dropped by retention', async (t: TestContext) => {
  const { env, db, refEnv, ref } = twoStores(t)
  for (const [i, d] of DAYS.entries()) {
    await importAt(env, db, queriesOfDay(d, 40, i), EARLY)
    await importAt(refEnv, ref, queriesOfDay(d, 40, i), EARLY)
  }
  // April's day as the version before folded it: into April's month tables, with a day column (and the
  // blockedcats column that opening a store of that version adds, engine/stats/db.ts, NULL in its rows).
  const april = day('2024-04-01')
  const d28 = day('2024-04-28')
  await db.write(async (c) => {
    await c.run(
      `CREATE TABLE mhours_${april} AS SELECT "user", ${d28}::INTEGER AS day, hour, requests, blocks FROM hours_${d28}`
    )
    await c.run(
      `CREATE TABLE mnames_${april} AS SELECT "user", ${d28}::INTEGER AS day, host, requests, nxdomain, blocks, cats, seq, NULL::VARCHAR AS blockedcats FROM names_${d28}`
    )
    await c.run(`DROP TABLE hours_${d28}`)
    await c.run(`DROP TABLE names_${d28}`)
  })
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // The other finished days fold into weeks; the month tables stay and are still read.
  await pruneStats(db, 'UTC', NOW)
  t.assert.deepStrictEqual(await weeks(db), { hours: [W2], names: [W2] })
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // Once April's last day is out of retention (2024-07-31 keeps days from 2024-04-31, i.e. May 1st), they go.
  await pruneStats(db, 'UTC', at('2024-07-31', '12:00'))
  const left = await db.read(async (c) =>
    (
      await c.runAndReadAll(
        "SELECT count(*)::INTEGER FROM duckdb_tables() WHERE table_name LIKE 'mhours%' OR table_name LIKE 'mnames%'"
      )
    ).getRows()
  )
  t.assert.strictEqual(left[0]![0], 0)
})
