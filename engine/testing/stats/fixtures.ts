/**
 * Test helpers for the statistics tests (not a test file): a config whose stats directories are in
 * a fresh temporary directory, and query records.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { type Config } from '../../config/index.js'
import { parseConfig } from '../../features.js'
import { silentLogger } from '../../log/index.js'
import { tempDir } from '../temp.js'
import type { QueryLogRecord } from '../../querylog/index.js'
import { createCsvQueryLog } from '../../querylog/writer.js'
import {
  TABLES_SQL,
  metaGet,
  openStatsDb,
  partitions,
  partitionsAmong,
  type PartitionKind,
  type StatsDb
} from '../../stats/db.js'
import { importClosedFiles } from '../../stats/importer.js'
import { rawHourSources } from '../../stats/raw-layout.js'

export interface StatsTestEnv {
  readonly root: string
  readonly config: Readonly<Config>
  readonly configFile: string
  readonly yaml: string
}

/** A temp dir (removed after the test) and a config pointing stats.dir/stats.db into it. */
export function statsTestEnv(t: TestContext, stats: Record<string, string | number | boolean> = {}): StatsTestEnv {
  const root = tempDir(t, 'filterd-stats-')
  const entries: Record<string, string | number | boolean> = {
    dir: join(root, 'csv'),
    db: join(root, 'statsdb'),
    ...stats
  }
  const yaml =
    'stats:\n' +
    Object.entries(entries)
      .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}\n`)
      .join('')
  const configFile = join(root, 'test.yaml')
  writeFileSync(configFile, yaml)
  return { root, config: parseConfig(yaml, configFile), configFile, yaml }
}

export function rec(
  time: number,
  address: string,
  user: string | null,
  name: string,
  extra: Partial<QueryLogRecord> = {}
): QueryLogRecord {
  return {
    time,
    address,
    user,
    name,
    qtype: 1,
    blockedName: '',
    reason: 'none',
    cats: [],
    blockedCats: [],
    nxdomain: false,
    rcode: 0,
    ...extra
  }
}

/** A category block of `name` by `cats`. */
export function blocked(
  time: number,
  address: string,
  user: string | null,
  name: string,
  cats: number[]
): QueryLogRecord {
  return rec(time, address, user, name, { blockedName: name, reason: 'category', cats, blockedCats: cats })
}

export const at = (d: string, hm: string): number => Date.parse(`${d}T${hm}:00Z`)

/** `n` queries spread over the day `d` (names and users varied, blocked and NXDOMAIN among them); `salt` varies a set. */
export function queriesOfDay(d: string, n: number, salt = 0): QueryLogRecord[] {
  const out: QueryLogRecord[] = []
  for (let i = 0; i < n; i++) {
    const t = at(d, '00:00') + ((i * 7919 + salt * 13) % 86_400) * 1000
    const user = i % 5 === 0 ? null : i % 2 === 0 ? 'alice' : 'bob'
    const name = `${i % 3 === 0 ? 'www.' : ''}n${(i + salt) % 7}.example`
    out.push(
      i % 6 === 0
        ? blocked(t, `10.0.0.${i % 4}`, user, name, [(i % 3) + 1])
        : rec(t, `10.0.0.${i % 4}`, user, name, { cats: [i % 4], nxdomain: i % 11 === 0 })
    )
  }
  return out
}
export const NOW = at('2024-05-15', '12:30')

/** The scenario of the spec's reports: one user with several addresses, anonymous addresses, another user. */
export const SCENARIO: QueryLogRecord[] = [
  rec(at('2024-05-14', '23:00'), '10.0.0.1', 'alice', 'old.example'),
  rec(at('2024-05-15', '10:05'), '10.0.0.1', 'alice', 'www.news.example', { cats: [5] }),
  rec(at('2024-05-15', '10:10'), '10.0.0.2', 'alice', 'www.news.example', { cats: [5] }),
  blocked(at('2024-05-15', '10:20'), '10.0.0.2', 'alice', 'ads.example', [3]),
  // 10.0.0.9 was alice's when this query was made (it may belong to someone else now).
  rec(at('2024-05-15', '11:30'), '10.0.0.9', 'alice', 'moved.example'),
  rec(at('2024-05-15', '11:00'), '10.0.1.1', 'bob', 'www.bob.example'),
  rec(at('2024-05-15', '12:10'), '10.0.0.1', 'alice', 'nx.example', { nxdomain: true }),
  rec(at('2024-05-15', '12:15'), '192.0.2.7', null, 'x.example'),
  rec(at('2024-05-15', '12:16'), '192.0.2.8', null, 'x.example', {
    reason: 'global-blacklist',
    blockedName: 'x.example'
  }),
  rec(at('2024-05-15', '12:20'), '10.0.0.1', 'alice', 'www.news.example', { cats: [5] })
]

/** Writes `records` through the CSV writer into closed files (`files` of them). */
export async function writeFiles(env: StatsTestEnv, records: readonly QueryLogRecord[], files = 1): Promise<void> {
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  const per = Math.ceil(records.length / files)
  for (let i = 0; i < records.length; i++) {
    log.write(records[i]!)
    if ((i + 1) % per === 0) await log.rotateNow()
  }
  await log.close()
}

/** The statistics store of `env`, closed after the test. */
export function openTestStatsDb(t: TestContext, env: StatsTestEnv): StatsDb {
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  return db
}

/** Writes `records` as one closed file and imports it at NOW, with no sort by user (a test sorts when it means to). */
export async function importUnsorted(
  db: StatsDb,
  env: StatsTestEnv,
  records: readonly QueryLogRecord[]
): Promise<void> {
  await writeFiles(env, records)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW, rawSortMinRows: Number.MAX_SAFE_INTEGER })
}

/** Raw rows in the statistics store (every raw partition). */
export async function rawCount(db: StatsDb): Promise<number> {
  return await db.read(async (c) => {
    const names = new Set((await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0])))
    const sources = partitionsAmong(names).raw.flatMap((h) => rawHourSources(names, h))
    if (sources.length === 0) return 0
    const r = await c.runAndReadAll(`SELECT count(*)::DOUBLE FROM (${sources.join(' UNION ALL ')})`)
    return Number(r.getRows()[0]![0])
  })
}

/** The partitions in the store, by kind. */
export async function partitionsOf(db: StatsDb): Promise<Record<PartitionKind, number[]>> {
  return await db.read((c) => partitions(c))
}

/** The ledger: rows imported per file name. */
export async function ledgerRows(db: StatsDb): Promise<number> {
  return await db.read(async (c) =>
    Number((await c.runAndReadAll('SELECT coalesce(sum(rows), 0)::DOUBLE FROM files')).getRows()[0]![0])
  )
}

/** A meta counter of the store. */
export async function metaOf(db: StatsDb, key: string): Promise<number> {
  return await db.read((c) => metaGet(c, key))
}
