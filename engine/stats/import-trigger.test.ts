// The importer wakes when a DNS process closes a statistics file (engine/querylog/import-trigger.ts),
// not only on its stats.import-interval tick: with an interval of an hour, a closed file is still
// in the store within seconds.
import { test, type TestContext } from 'node:test'
import { mkdirSync } from 'node:fs'
import { silentLogger } from '../log/index.js'
import { until } from '../testing/wait.js'
import { startStatsImporter } from './importer.js'
import { rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'

test('a closed file wakes the importer long before its interval', async (t: TestContext) => {
  const env = statsTestEnv(t)
  mkdirSync(env.config.stats.dir, { recursive: true })
  const importer = startStatsImporter(env.config, silentLogger(), { intervalMs: 3_600_000 })
  t.after(() => importer.close())
  // The first import runs at start, with nothing to take; the watch begins with it.
  await until('the first import', () => importer.last !== undefined, 30_000)
  t.assert.strictEqual(await rawCount(importer.statsDb), 0)
  await writeFiles(env, [rec(Date.now() - 1000, '10.0.0.1', 'alice', 'a.example')])
  await until('the closed file imported', async () => (await rawCount(importer.statsDb)) === 1, 30_000, 100)
  // Two files closed while an import runs fold into one more import: each row is there once.
  await writeFiles(
    env,
    [rec(Date.now() - 900, '10.0.0.1', 'alice', 'b.example'), rec(Date.now() - 800, '10.0.0.1', 'alice', 'c.example')],
    2
  )
  await until('both files imported', async () => (await rawCount(importer.statsDb)) === 3, 30_000, 100)
})
