/**
 * The fold tests' stores and reports (engine/stats/fold.test.ts, fold-steps.test.ts): two stores given the
 * same queries, one that never folds as the reference, and every report of every kind of user over the range.
 */
import type { TestContext } from 'node:test'
import { openStatsDb, type StatsDb } from '../../stats/db.js'
import { ALL_USERS, ANONYMOUS_USER } from '../../querylog/files.js'
import { weekPartitions } from '../../stats/fold.js'
import { importClosedFiles } from '../../stats/importer.js'
import { overview } from '../../stats/overview.js'
import { activityByDay, activityByHour, detail, topDomains } from '../../stats/reports.js'
import { at, statsTestEnv, writeFiles, type StatsTestEnv } from './fixtures.js'
import { ReportTime, parseDay } from '../../stats/time.js'
import type { QueryLogRecord } from '../../querylog/index.js'

export const day = (s: string): number => parseDay(s)!
const time = new ReportTime('UTC')
/** Before every query of these tests: nothing is over for an hour yet, so nothing folds. */
export const EARLY = at('2024-04-28', '00:10')
export const NOW = at('2024-05-15', '12:30')
const [FROM, TO] = [day('2024-04-27'), day('2024-05-15')]

export const DAYS = ['2024-04-28', '2024-04-30', '2024-05-01', '2024-05-02', '2024-05-15']

/** Every report of every kind of user over the range, and the overview. */
export async function reports(db: StatsDb): Promise<unknown[]> {
  const out: unknown[] = []
  for (const u of ['alice', 'bob', ANONYMOUS_USER, ALL_USERS]) {
    out.push(await activityByDay(db, u, FROM, TO))
    out.push(await activityByHour(db, time, u, FROM, TO))
    out.push(await topDomains(db, u, FROM, TO, 'all'))
    out.push(await topDomains(db, u, day('2024-04-30'), day('2024-05-01'), 'www'))
    out.push(await detail(db, u, FROM, TO))
  }
  out.push(await overview(db, time, FROM, TO))
  return out
}

export async function importAt(env: StatsTestEnv, db: StatsDb, records: QueryLogRecord[], now: number): Promise<void> {
  await writeFiles(env, records, 3)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => now })
}

/** Two stores given the same queries: `ref` never folds (every import is "early"), `db` is the one under test. */
export function twoStores(t: TestContext): { env: StatsTestEnv; db: StatsDb; refEnv: StatsTestEnv; ref: StatsDb } {
  const env = statsTestEnv(t)
  const refEnv = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => Promise.all([db.close(), ref.close()]))
  return { env, db, refEnv, ref }
}

export const weeks = (db: StatsDb): Promise<{ hours: number[]; names: number[] }> => db.read((c) => weekPartitions(c))
/** The Mondays of the weeks of DAYS that fold. */
export const [W1, W2] = [day('2024-04-22'), day('2024-04-29')]
