/**
 * A fold of many days in steps of one day, imports between the steps (apart from fold.test.ts: its 40 imports and
 * 40 steps take about half a minute alone, several times that on a loaded machine, and Node 20 gives a whole test
 * file one --test-timeout).
 */
import { test, type TestContext } from 'node:test'
import { ALL_USERS } from '../querylog/files.js'
import { importClosedFiles } from './importer.js'
import { activityByDay } from './reports.js'
import { at, partitionsOf, queriesOfDay, writeFiles } from '../testing/stats/fixtures.js'
import { EARLY, NOW, day, importAt, reports, twoStores } from '../testing/stats/fold-stores.js'
import { setFailpoint } from '../failpoints.js'

// Every day due folds in one prune here (a step continues while it lasts under this), however loaded the machine.
setFailpoint('stats.fold.step-ms', '600000')

test('imports go on while a fold of many days is pending: one day per step, an import between steps', async (t: TestContext) => {
  const { env, db, refEnv, ref } = twoStores(t)
  // 40 days of queries (April 1st to May 10th), all over at NOW, none folded yet.
  const first = day('2024-04-01')
  const days = Array.from({ length: 40 }, (_, i) => new Date((first + i) * 86_400_000).toISOString().slice(0, 10))
  const before = at('2024-03-31', '12:00') // nothing is over yet
  await importAt(
    env,
    db,
    days.flatMap((d, i) => queriesOfDay(d, 8, i)),
    before
  )
  await importAt(
    refEnv,
    ref,
    days.flatMap((d, i) => queriesOfDay(d, 8, i)),
    before
  )
  t.assert.strictEqual((await partitionsOf(db)).hours.length, 40)
  setFailpoint('stats.fold.step-ms', '0') // exactly one day per step, as a large store folds
  t.after(() => {
    setFailpoint('stats.fold.step-ms', '600000')
  })
  const today = queriesOfDay('2024-05-15', 40, 99)
  await importAt(refEnv, ref, today, EARLY)
  // Each import of today's queries completes, with its rows in the reports, and the prune after it folds one day.
  for (let step = 1; step <= 40; step++) {
    await writeFiles(env, today.slice(step - 1, step))
    await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW + step * 2000 })
    t.assert.strictEqual((await partitionsOf(db)).hours.length, 40 - step + 1, `after import ${step}`)
    const all = await activityByDay(db, ALL_USERS, day('2024-05-15'), day('2024-05-15'))
    t.assert.strictEqual(all.datasets[0]!.data[0], step, `today's rows after import ${step}`)
  }
  t.assert.deepStrictEqual((await partitionsOf(db)).hours, [day('2024-05-15')])
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
})
