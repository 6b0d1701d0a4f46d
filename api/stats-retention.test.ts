// The report routes take a range back as far as the statistics store keeps (stats.retention-months), not
// a fixed three months: a store kept six months answers a range five months back; one kept one month refuses
// a range two months back, naming the first day kept.
import { test, type TestContext } from 'node:test'
import { join } from 'node:path'
import { openStatsDb } from '../engine/stats/index.js'
import { HOUR_MS } from '../engine/stats/time.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { call, errorOf, startApi } from './testing/fixtures.js'

const NOW = Date.UTC(2024, 6, 15, 12) // 2024-07-15 12:00 UTC

for (const [months, from, ok] of [
  [6, '2024-02-20', true],
  [1, '2024-05-20', false]
] as const) {
  test(`stats.retention-months ${months}: a range from ${from} is ${ok ? 'answered' : 'refused'}`, async (t: TestContext) => {
    const { dir, cleanup } = makeTempDir('filterd-stats-retention-')
    t.after(cleanup)
    const db = openStatsDb(join(dir, 'statsdb'), { retention: { months, rawMs: 24 * HOUR_MS } })
    t.after(() => db.close())
    const api = await startApi({ stats: { db, timezone: 'UTC', now: () => NOW } })
    t.after(() => api.close())
    await call(api.base, 'PUT', '/users/alice', { ip: ['10.0.0.1'] })
    const r = await call(api.base, 'GET', `/users/alice/stat/activity/day?from=${from}&to=2024-07-15`)
    if (ok) {
      t.assert.strictEqual(r.status, 200, r.text)
    } else {
      t.assert.strictEqual(r.status, 400)
      t.assert.match(errorOf(r).message, /2024-06-15 to 2024-07-15/)
    }
  })
}
