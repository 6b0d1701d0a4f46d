import { test, type TestContext } from 'node:test'
import { openStatsDb } from './db.js'
import { foldDays } from './fold.js'
import { pruneStats } from './maintenance.js'
import { buildMonth, buildMonths } from './month-build.js'
import { queriesOfDay, statsTestEnv } from '../testing/stats/fixtures.js'
import {
  ALL,
  APRIL,
  EARLY,
  MAY,
  NOW,
  folded,
  importAt,
  reports,
  tables,
  twoStores
} from '../testing/stats/month-stores.js'

test('a month made while imports and folds go on keeps every row exactly once', async (t: TestContext) => {
  const { env, db, refEnv, ref } = await twoStores(t)
  // Today's queries imported between the two steps: the weeks do not change, the month is swapped in.
  const today = queriesOfDay('2024-06-12', 25, 5)
  const swapped = await buildMonth(
    db,
    { kind: 'names', month: APRIL },
    {
      between: () => importAt(env, db, today, NOW + 1000)
    }
  )
  t.assert.strictEqual(swapped, true)
  await importAt(refEnv, ref, today, EARLY)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))

  // A late file for May 20th folded into its week between the steps: May's weeks changed, so the copy is dropped.
  const late = queriesOfDay('2024-05-20', 30, 7)
  const changed = await buildMonth(
    db,
    { kind: 'names', month: MAY },
    {
      between: async () => {
        await importAt(env, db, late, NOW + 2000)
        await db.write((c) => foldDays(db, c, 'UTC', NOW + 2000, { force: true }))
      }
    }
  )
  t.assert.strictEqual(changed, false)
  await importAt(refEnv, ref, late, EARLY)
  t.assert.ok(
    !(await tables(db)).some((n) => n.endsWith('__mbuild')),
    'the copies of a build whose weeks changed are dropped'
  )
  t.assert.ok(!(await folded(db)).includes(`mnames_${MAY}`))
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // Made again later, it holds the late rows too.
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW + 3000), 3)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))

  // And imports running while the months of a second store are made (no hook: each at its own pace).
  const env2 = statsTestEnv(t)
  const db2 = openStatsDb(env2.config.stats.db)
  t.after(() => db2.close())
  await importAt(env2, db2, [...ALL, ...late], EARLY)
  await pruneStats(db2, 'UTC', NOW)
  const building = buildMonths(db2, 'UTC', NOW)
  for (let i = 0; i < 5; i++) await importAt(env2, db2, today.slice(i * 5, i * 5 + 5), NOW + 1000 + i)
  t.assert.strictEqual(await building, 4)
  t.assert.deepStrictEqual(await reports(db2), await reports(ref))
})
