// Retention from the config (stats.retention-months, stats.raw-retention-hours): a short retention
// prunes raw hours and aggregates earlier than the defaults would, and out-of-range values are refused
// by the config loader (what `filterd check-config` runs).
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseConfig } from '../features.js'
import { openStatsDb, type StatsDb } from './db.js'
import { importClosedFiles, statsDbOptions } from './importer.js'
import { pruneStats } from './maintenance.js'
import { activityByDay } from './reports.js'
import { NOW, SCENARIO, at, partitionsOf, rawCount, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'
import { HOUR_MS, parseDay } from './time.js'
import { weekPartitions } from './fold.js'
import { runCli } from '../testing/daemon.js'
import { makeTempDir } from '../testing/temp.js'

const day = (s: string): number => parseDay(s)!

test('a short retention drops raw hours and aggregates sooner (stats.raw-retention-hours, stats.retention-months)', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO)
  const config = parseConfig(
    JSON.stringify({ stats: { db: env.config.stats.db, 'retention-months': 1, 'raw-retention-hours': 2 } }),
    join(env.config.stats.db, 'x.yaml')
  )
  t.assert.deepStrictEqual(statsDbOptions(config).retention, { months: 1, rawMs: 2 * HOUR_MS })
  const db: StatsDb = openStatsDb(env.config.stats.db, statsDbOptions(config))
  t.after(() => db.close())
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  // Raw hours 23:00 on the 14th, 10:00, 11:00, 12:00 on the 15th. Two hours of raw rows at 12:30: the import
  // keeps those from 10:30 on (6 rows of 10; the default day keeps all 10), and at 14:30 the hour of 11:00 goes.
  t.assert.strictEqual(await rawCount(db), 6)
  t.assert.strictEqual(await pruneStats(db, 'UTC', at('2024-05-15', '14:30')), 1)
  t.assert.strictEqual((await partitionsOf(db)).raw.length, 1)
  // One month of aggregates: 2024-06-20 keeps days from 2024-05-20, so the week of the 14th and 15th
  // (its last day the 19th) is gone, where three months keep it until August.
  const d15 = day('2024-05-15')
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d15, d15)).datasets[0]!.data, [6])
  await pruneStats(db, 'UTC', at('2024-06-20', '00:30'))
  t.assert.deepStrictEqual(await db.read((c) => weekPartitions(c)), { hours: [], names: [] })
  t.assert.deepStrictEqual(await partitionsOf(db), { raw: [], hours: [], names: [] })
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d15, d15)).datasets[0]!.data, [0])
})

test('retention keys out of range are refused by the config loader and by filterd check-config', async (t: TestContext) => {
  const ok = parseConfig(
    JSON.stringify({ stats: { 'retention-months': 36, 'raw-retention-hours': 168 } }),
    '/nonexistent/filterd.yaml'
  )
  t.assert.deepStrictEqual([ok.stats['retention-months'], ok.stats['raw-retention-hours']], [36, 168])
  const defaults = parseConfig('{}', '/nonexistent/filterd.yaml')
  t.assert.deepStrictEqual([defaults.stats['retention-months'], defaults.stats['raw-retention-hours']], [3, 24])
  const dir = makeTempDir('filterd-retention-')
  t.after(dir.cleanup)
  const file = join(dir.dir, 'filterd.yaml')
  writeFileSync(file, 'stats:\n  retention-months: 48\n')
  const r = await runCli(['check-config', '--config', file])
  t.assert.notStrictEqual(r.code, 0)
  t.assert.match(r.stdout + r.stderr, /retention-months/)
  for (const [key, value] of [
    ['retention-months', 0],
    ['retention-months', 37],
    ['retention-months', 1.5],
    ['raw-retention-hours', 0],
    ['raw-retention-hours', 169]
  ] as const) {
    t.assert.throws(
      () => parseConfig(JSON.stringify({ stats: { [key]: value } }), '/nonexistent/filterd.yaml'),
      (err: Error) => err.message.includes(`stats.${key}`) || err.message.includes(key),
      `${key}: ${value}`
    )
  }
})
