// `filterd stats-migrate`: an LMDB statistics environment built by the importer filterd had before
// the column store (kept in testing/legacy) is moved into the DuckDB store, and every report
// answers exactly as it did before, in UTC and in a half-hour time zone.
import { test, type TestContext } from 'node:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { run } from './stats-migrate.js'
import { openStatsDb } from '../engine/stats/db.js'
import { ALL_USERS, ANONYMOUS_USER } from '../engine/querylog/files.js'
import { openLegacyStatsDb, type LegacyStatsDb } from '../engine/stats/legacy/lmdb.js'
import { activityByDay, activityByHour, detail, rawLastHour, topDomains } from '../engine/stats/reports.js'
import { overview } from '../engine/stats/overview.js'
import {
  NOW,
  SCENARIO,
  at,
  blocked,
  ledgerRows,
  rec,
  statsTestEnv,
  writeFiles
} from '../engine/testing/stats/fixtures.js'
import * as legacyReports from '../engine/testing/stats/legacy/reports.js'
import { overview as legacyOverview } from '../engine/testing/stats/legacy/overview.js'
import { importClosedFiles as legacyImport } from '../engine/testing/stats/legacy/importer.js'
import { ReportTime, parseDay } from '../engine/stats/time.js'
import type { StatsDb } from '../engine/stats/db.js'

const USERS = ['alice', 'bob', ANONYMOUS_USER, ALL_USERS, 'nobody']

/** Every report for every user over a few ranges, from the old environment or the new store. */
async function everyReport(db: { old: LegacyStatsDb } | { now: StatsDb }, time: ReportTime): Promise<unknown[]> {
  const out: unknown[] = []
  const d = parseDay('2024-05-15')!
  const ranges: Array<[number, number]> = [
    [d, d],
    [d - 1, d],
    [d - 7, d]
  ]
  for (const user of USERS) {
    for (const [from, to] of ranges) {
      if ('old' in db) {
        out.push(
          legacyReports.activityByHour(db.old, time, user, from, to),
          legacyReports.activityByDay(db.old, user, from, to),
          legacyReports.topDomains(db.old, user, from, to, 'all'),
          legacyReports.topDomains(db.old, user, from, to, 'www'),
          legacyReports.detail(db.old, user, from, to)
        )
      } else {
        out.push(
          await activityByHour(db.now, time, user, from, to),
          await activityByDay(db.now, user, from, to),
          await topDomains(db.now, user, from, to, 'all'),
          await topDomains(db.now, user, from, to, 'www'),
          await detail(db.now, user, from, to)
        )
      }
    }
    out.push(
      'old' in db ? legacyReports.rawLastHour(db.old, time, user, NOW) : await rawLastHour(db.now, time, user, NOW)
    )
  }
  for (const [from, to] of ranges)
    out.push('old' in db ? legacyOverview(db.old, time, from, to) : await overview(db.now, time, from, to))
  return out
}

async function silently(fn: () => Promise<number>): Promise<[number, string]> {
  const out: string[] = []
  const write = process.stdout.write
  process.stdout.write = (s: string) => {
    out.push(s)
    return true
  }
  try {
    return [await fn(), out.join('')]
  } finally {
    process.stdout.write = write
  }
}

for (const timeZone of ['UTC', 'Asia/Kolkata']) {
  test(`migrates an LMDB statistics environment and every report answers as before (${timeZone})`, async (t: TestContext) => {
    const env = statsTestEnv(t, { timezone: timeZone })
    const records = [
      ...SCENARIO,
      // Around local midnight in India (18:30 UTC), and a name whose categories change within a day.
      rec(at('2024-05-14', '18:20'), '10.0.0.1', 'alice', 'late.example', { cats: [7] }),
      rec(at('2024-05-14', '18:40'), '10.0.0.1', 'alice', 'late.example', { cats: [8] }),
      blocked(at('2024-05-15', '09:00'), '192.0.2.9', null, 'ads.example', [3, 4])
    ]
    // Imported in two runs, as a running api role would have: several records per key.
    await writeFiles(env, records.slice(0, 6), 2)
    const old = openLegacyStatsDb(env.config.stats.db)
    await legacyImport(old, env.config.stats.dir, timeZone, { now: () => NOW })
    await writeFiles(env, records.slice(6), 2)
    await legacyImport(old, env.config.stats.dir, timeZone, { now: () => NOW })
    const time = new ReportTime(timeZone)
    const before = await everyReport({ old }, time)
    await old.close()

    const [code, out] = await silently(() => run(['--config', env.configFile]))
    t.assert.strictEqual(code, 0, out)
    t.assert.match(out, /^migrated 13 raw rows, \d+ hour, \d+ day and \d+ name records, 4 ledger entries into /)
    t.assert.ok(
      !existsSync(join(env.config.stats.db, 'data.mdb')) && existsSync(join(env.config.stats.db, 'data.mdb.migrated'))
    )
    // A second run finds nothing to move.
    t.assert.deepStrictEqual(await silently(() => run(['--config', env.configFile])), [
      0,
      `nothing to migrate: no data.mdb in ${env.config.stats.db}\n`
    ])

    const db = openStatsDb(env.config.stats.db)
    t.after(() => db.close())
    t.assert.deepStrictEqual(await everyReport({ now: db }, time), before)
    t.assert.strictEqual(await ledgerRows(db), records.length, 'the exactly-once ledger came along')
  })
}

test('refuses to migrate while another process holds the statistics store (its one writer)', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const old = openLegacyStatsDb(env.config.stats.db)
  await old.close()
  writeFileSync(join(env.root, 'keep'), '')
  const { spawn } = await import('node:child_process')
  // The holder: a child process that opens the store and waits.
  const holder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { DuckDBInstance } from '@duckdb/node-api'; await DuckDBInstance.create(${JSON.stringify(join(env.config.stats.db, 'stats.duckdb'))}); console.log('held'); setInterval(() => {}, 1000)`
    ],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] }
  )
  t.after(() => holder.kill('SIGKILL'))
  await new Promise<void>((resolve) =>
    holder.stdout.on('data', () => {
      resolve()
    })
  )
  const err: string[] = []
  const write = process.stderr.write
  process.stderr.write = (s: string) => {
    err.push(s)
    return true
  }
  let code: number
  try {
    code = await run(['--config', env.configFile])
  } finally {
    process.stderr.write = write
  }
  t.assert.strictEqual(code, 1)
  t.assert.match(err.join(''), /stop the api role \(the statistics store's one writer\) and run again/)
  t.assert.ok(existsSync(join(env.config.stats.db, 'data.mdb')), 'the old environment is left as it was')
})
