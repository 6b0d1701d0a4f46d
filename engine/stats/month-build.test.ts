import { test, type TestContext } from 'node:test'
import { openStatsDb } from './db.js'
import { FOLD_EVERY_MS } from './fold.js'
import { pruneStats } from './maintenance.js'
import { buildMonths, dueMonths } from './month-build.js'
import { activityByDay } from './reports.js'
import { at, partitionsOf, queriesOfDay, statsTestEnv } from '../testing/stats/fixtures.js'
import {
  APRIL,
  EARLY,
  JUNE,
  MAY,
  NOW,
  WEEKS,
  day,
  folded,
  importAt,
  reports,
  tables,
  twoStores,
  weekNames
} from '../testing/stats/month-stores.js'

test('month tables made from finished weeks change no report, across month, week and day boundaries', async (t: TestContext) => {
  const { env, db, refEnv, ref } = await twoStores(t)
  const expected = await reports(ref)
  t.assert.ok((expected[0] as { datasets: Array<{ data: number[] }> }).datasets[0]!.data.some((v) => v > 0))
  t.assert.deepStrictEqual(await folded(db), weekNames(WEEKS))
  t.assert.deepStrictEqual(await reports(db), expected)
  // April and May are due; June is not (its weeks are not over), nor is anything at a time before May's last week ends.
  const names = await tables(db)
  t.assert.deepStrictEqual(dueMonths(names, 'UTC', NOW), [
    { kind: 'hours', month: APRIL },
    { kind: 'names', month: APRIL },
    { kind: 'hours', month: MAY },
    { kind: 'names', month: MAY }
  ])
  t.assert.deepStrictEqual(
    dueMonths(names, 'UTC', at('2024-06-02', '23:30')).map((u) => u.month),
    [APRIL, APRIL]
  )

  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW), 4)
  const afterBuild = [
    ...weekNames([day('2024-05-27'), day('2024-06-10')]),
    `mhours_${APRIL}`,
    `mhours_${MAY}`,
    `mnames_${APRIL}`,
    `mnames_${MAY}`
  ].sort()
  // The weeks inside April and May are gone; the week straddling them is gone too (its days are in the two
  // months); the one straddling May and June keeps its June days.
  t.assert.deepStrictEqual(await folded(db), afterBuild)
  t.assert.deepStrictEqual(
    await db.read(async (c) =>
      (await c.runAndReadAll(`SELECT DISTINCT day FROM wnames_${day('2024-05-27')} ORDER BY 1`))
        .getRows()
        .map((r) => Number(r[0]))
    ),
    [JUNE, JUNE + 1]
  )
  t.assert.deepStrictEqual(await reports(db), expected)
  // Copied in ranges of users, each month table is sorted by (user, day) all the same.
  for (const m of [`mhours_${APRIL}`, `mnames_${APRIL}`, `mhours_${MAY}`, `mnames_${MAY}`]) {
    const order = await db.read(async (c) =>
      (
        await c.runAndReadAll(
          `SELECT count(*)::INTEGER, count(*) FILTER (WHERE p > ("user", day))::INTEGER FROM (SELECT "user", day, lag(("user", day)) OVER (ORDER BY rowid) AS p FROM ${m})`
        )
      ).getRows()
    )
    t.assert.ok((order[0]![0]! as number) > 40, `${m} has rows for several ranges`)
    t.assert.strictEqual(order[0]![1], 0, `${m} is sorted by user, day`)
  }
  // Nothing more is due: a second run makes nothing.
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW + 1000), 0)

  // Late files: for a day of a month made (May 2nd) and for a June day of the straddling week.
  const late = [...queriesOfDay('2024-05-02', 30, 9), ...queriesOfDay('2024-06-01', 20, 8)]
  await importAt(env, db, late, NOW + 60_000)
  await importAt(refEnv, ref, late, EARLY)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // Folded: May 2nd into May's table (appended), June 1st into its week; no day is in two folded tables.
  await pruneStats(db, 'UTC', NOW + FOLD_EVERY_MS + 120_000)
  t.assert.deepStrictEqual((await partitionsOf(db)).names, [day('2024-06-12')])
  t.assert.deepStrictEqual(await folded(db), afterBuild)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
})

test('a store with no month tables and a fresh store answer as before; no week, no month', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW), 0)
  t.assert.deepStrictEqual(await folded(db), [])
  const empty = await activityByDay(db, 'alice', APRIL, JUNE)
  t.assert.ok(empty.datasets.every((d) => d.data.every((v) => v === 0)))
})
