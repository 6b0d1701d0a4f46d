/**
 * The statistics environment of filterd before the column store (engine/stats/db.ts): an LMDB
 * environment (`<stats.db>/data.mdb`). Kept only so that `filterd stats-migrate` can read an old one
 * (engine/stats/legacy/migrate.ts). Named databases and their keys:
 *
 *   hour    [user, utcHour]         → [requests, blocks]
 *   day     [user, day]             → [requests, blocks]
 *   domain  [user, day, host]       → [requests, nxdomain, blocks, cats] (cats: the host's categories, last seen that day)
 *   raw     [user, createdMs, seq]  → [created, nxdomain, address, host, blockedhost, reasom, cats, blockedcats]
 *   files   file name               → ImportProgress (the exactly-once ledger)
 *   meta    'seq'                   → last raw-row sequence number
 *
 * `user` is the user id at the time of the query, or ANONYMOUS_USER. `day` is a local day number
 * (engine/stats/time.ts). Every key starts with the user, so one user's report is one range scan,
 * and pruning skips from user to user. Categories live in the per-day domain records so that they
 * are pruned with them.
 */
import { open, type Database, type RootDatabase } from 'lmdb'
import { mkdirSync } from 'node:fs'
import { EngineError } from '../../errors.js'
import type { ImportProgress } from '../db.js'

export type Pair = [requests: number, blocks: number]
export type DomainValue = [requests: number, nxdomain: number, blocks: number, cats: number[]]
export type RawValue = [
  created: number,
  nxdomain: 0 | 1,
  address: string,
  host: string,
  blockedHost: string,
  reason: string,
  cats: number[],
  blockedCats: number[]
]

export interface LegacyStatsDb {
  readonly path: string
  readonly root: RootDatabase
  readonly hour: Database<Pair, [string, number]>
  readonly day: Database<Pair, [string, number]>
  readonly domain: Database<DomainValue, [string, number, string]>
  readonly raw: Database<RawValue, [string, number, number]>
  readonly files: Database<ImportProgress, string>
  readonly meta: Database<number, string>
  close(): Promise<void>
}

/** Opens (creating when needed: tests build an old store) the LMDB statistics environment at `path`. */
export function openLegacyStatsDb(path: string): LegacyStatsDb {
  try {
    mkdirSync(path, { recursive: true })
    const root = open({ path, maxDbs: 16 })
    return {
      path,
      root,
      hour: root.openDB<Pair, [string, number]>({ name: 'hour' }),
      day: root.openDB<Pair, [string, number]>({ name: 'day' }),
      domain: root.openDB<DomainValue, [string, number, string]>({ name: 'domain' }),
      raw: root.openDB<RawValue, [string, number, number]>({ name: 'raw' }),
      files: root.openDB<ImportProgress, string>({ name: 'files' }),
      meta: root.openDB<number, string>({ name: 'meta' }),
      close: () => root.close()
    }
  } catch (err) {
    throw new EngineError(
      'ENGINE_STORE_OPEN',
      `cannot open the old statistics environment at ${path}: ${(err as Error).message}`,
      { cause: err }
    )
  }
}
