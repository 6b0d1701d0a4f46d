import { test, type TestContext } from 'node:test'
import { queriesOfDay } from '../testing/stats/fixtures.js'
import { APRIL, EARLY, MAY, NOW, folded, importAt, reports, twoStores } from '../testing/stats/month-stores.js'
import { setFailpoint } from '../failpoints.js'

test('the importer makes the months due beside its imports', async (t: TestContext) => {
  const { env, db, refEnv, ref } = await twoStores(t)
  setFailpoint('stats.month.build', undefined)
  t.after(() => {
    setFailpoint('stats.month.build', 'off')
    // A month is copied in ranges of users of about this many rows: several ranges here.
    setFailpoint('stats.month.chunk-rows', '40')
  })
  const today = queriesOfDay('2024-06-12', 10, 3)
  await importAt(env, db, today, NOW + 1000) // waits for the build the import started
  t.assert.deepStrictEqual(
    (await folded(db)).filter((n) => n.startsWith('m')),
    [`mhours_${APRIL}`, `mhours_${MAY}`, `mnames_${APRIL}`, `mnames_${MAY}`]
  )
  await importAt(refEnv, ref, today, EARLY)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
})
