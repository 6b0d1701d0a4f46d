/**
 * The memory of a large query goes back to the system once the query is over: the statistics store's
 * DuckDB runs its allocator's background thread (engine/stats/db.ts, instanceSettings). Without it the
 * api role's RSS kept the peak of every sort of a raw hour, outside stats.duckdb-memory, and climbed
 * with them under steady load (bench/stats/api-memory.ts).
 */
import { test, type TestContext } from 'node:test'
import { tempDir } from '../testing/temp.js'
import { until } from '../testing/wait.js'
import { openStatsDb } from './db.js'

const MiB = 1024 * 1024
/** Rows sorted: a few hundred MiB of sort at its peak, as the sort of a busy raw hour. */
const ROWS = 6_000_000
/** What the RSS may stay above its level before the sorts: heap noise and DuckDB's own caches. */
const SLACK_MIB = 48

test(
  'the memory of a large sort goes back to the system within a minute of its end',
  { timeout: 300_000 },
  async (t: TestContext) => {
    const db = openStatsDb(tempDir(t, 'filterd-memory-return-'), { memoryLimit: '512MB', threads: 2 })
    t.after(() => db.close())
    await db.write(async (c) => {
      await c.run(
        `CREATE TABLE r AS SELECT (i % 1000)::INTEGER AS uid, i AS created, (i % 5000)::INTEGER AS hid, 'x' || (i % 77) AS reason FROM range(${ROWS}) t(i)`
      )
    })
    const before = process.memoryUsage.rss()
    let peak = before
    for (let i = 0; i < 3; i++) {
      await db.write(async (c) => {
        await c.run('CREATE OR REPLACE TABLE s AS SELECT * FROM r ORDER BY uid, created')
      })
      peak = Math.max(peak, process.memoryUsage.rss())
    }
    t.diagnostic(`RSS before the sorts ${Math.round(before / MiB)} MiB, after them ${Math.round(peak / MiB)} MiB`)
    t.assert.ok(peak > before + 2 * SLACK_MIB * MiB, 'the sorts took memory (or the test proves nothing)')
    await until(
      `the RSS back within ${SLACK_MIB} MiB of its ${Math.round(before / MiB)} MiB before the sorts (now ${Math.round(process.memoryUsage.rss() / MiB)} MiB)`,
      () => process.memoryUsage.rss() < before + SLACK_MIB * MiB,
      60_000,
      500
    )
  }
)
