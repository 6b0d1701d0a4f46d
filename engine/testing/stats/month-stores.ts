/**
 * The stores and reports the month-build tests share (engine/stats/month-build*.test.ts): days on both sides of
 * month and week boundaries, every report over ranges crossing them, and a reference store that never folds.
 */
import type { TestContext } from 'node:test'
import { TABLES_SQL, openStatsDb, type StatsDb } from '../../stats/db.js'
import { ALL_USERS, ANONYMOUS_USER } from '../../querylog/files.js'
import { importClosedFiles } from '../../stats/importer.js'
import { pruneStats } from '../../stats/maintenance.js'
import { monthBuildSettled } from '../../stats/month-build.js'
import { overview } from '../../stats/overview.js'
import { activityByDay, activityByHour, detail, topDomains } from '../../stats/reports.js'
import { at, queriesOfDay, statsTestEnv, writeFiles, type StatsTestEnv } from './fixtures.js'
import { ReportTime, parseDay } from '../../stats/time.js'
import type { QueryLogRecord } from '../../querylog/index.js'
import { setFailpoint } from '../../failpoints.js'

export const day = (s: string): number => parseDay(s)!
// Every day due folds in one prune here, however loaded the machine.
setFailpoint('stats.fold.step-ms', '600000')
// The importer's own month builds are off but in the test of them: the others make months step by step.
setFailpoint('stats.month.build', 'off')
// A month is copied in ranges of users of about this many rows: several ranges here.
setFailpoint('stats.month.chunk-rows', '40')
const time = new ReportTime('UTC')
/** Before every import of these tests: nothing is over for an hour yet, so nothing folds and no month is due. */
export const EARLY = at('2024-04-01', '00:10')
/** April and May are over, and so is every week overlapping them (the last ends on Sunday, June 2nd). */
export const NOW = at('2024-06-12', '12:30')
export const [APRIL, MAY, JUNE] = [day('2024-04-01'), day('2024-05-01'), day('2024-06-01')]
// April 1st 2024 was a Monday: the week of April 29th straddles April and May, the week of May 27th May and June.
const DAYS = [
  '2024-04-03',
  '2024-04-28',
  '2024-04-30',
  '2024-05-01',
  '2024-05-02',
  '2024-05-20',
  '2024-05-31',
  '2024-06-01',
  '2024-06-02',
  '2024-06-10',
  '2024-06-12'
]
/** Ranges that start and end inside months, weeks and days on either side of each boundary. */
const RANGES: Array<[string, string]> = [
  ['2024-04-01', '2024-06-12'],
  ['2024-04-29', '2024-05-05'],
  ['2024-04-30', '2024-05-01'],
  ['2024-05-02', '2024-05-31'],
  ['2024-05-31', '2024-06-02'],
  ['2024-06-01', '2024-06-12'],
  ['2024-04-28', '2024-04-28']
]

export const ALL = DAYS.flatMap((d, i) => queriesOfDay(d, 40, i))

/** Every report over every range (every kind of user over the whole range, one user and the totals over the others), and the overview. */
export async function reports(db: StatsDb): Promise<unknown[]> {
  const out: unknown[] = []
  for (const [a, b] of RANGES) {
    const [from, to] = [day(a), day(b)]
    for (const u of from === APRIL ? ['alice', 'bob', ANONYMOUS_USER, ALL_USERS] : ['alice', ALL_USERS]) {
      out.push(await activityByDay(db, u, from, to))
      out.push(await activityByHour(db, time, u, from, to))
      out.push(await topDomains(db, u, from, to, 'all'))
      out.push(await topDomains(db, u, from, to, 'www'))
      out.push(await detail(db, u, from, to))
    }
  }
  out.push(await overview(db, time, APRIL, day('2024-06-12')))
  return out
}

export async function importAt(env: StatsTestEnv, db: StatsDb, records: QueryLogRecord[], now: number): Promise<void> {
  await writeFiles(env, records, 3)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => now })
  await monthBuildSettled(db)
}

export const tables = (db: StatsDb): Promise<string[]> =>
  db.read(async (c) => (await c.runAndReadAll(`${TABLES_SQL} ORDER BY 1`)).getRows().map((r) => String(r[0])))
export const folded = async (db: StatsDb): Promise<string[]> =>
  (await tables(db)).filter((n) => /^[wm](hours|names)_/.test(n))

/**
 * Two stores given the same queries early (nothing folded): `ref` keeps its day tables, `db` folds its
 * finished days into week tables at NOW; both answer the same.
 */
export async function twoStores(
  t: TestContext
): Promise<{ env: StatsTestEnv; db: StatsDb; refEnv: StatsTestEnv; ref: StatsDb }> {
  const env = statsTestEnv(t)
  const refEnv = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => Promise.all([db.close(), ref.close()]))
  await importAt(env, db, ALL, EARLY)
  await importAt(refEnv, ref, ALL, EARLY)
  await pruneStats(db, 'UTC', NOW)
  return { env, db, refEnv, ref }
}

/** The week tables as the folds leave them at NOW: the Mondays of the weeks of DAYS but today's. */
export const WEEKS = ['2024-04-01', '2024-04-22', '2024-04-29', '2024-05-20', '2024-05-27', '2024-06-10'].map(day)
export const weekNames = (weeks: readonly number[]): string[] =>
  [...weeks.map((w) => `whours_${w}`), ...weeks.map((w) => `wnames_${w}`)].sort()
