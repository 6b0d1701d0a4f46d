/**
 * `filterd backup --config FILE DIR`: a consistent copy of this host's store and statistics, taken
 * while the roles run (docs/backup.md).
 *
 *   DIR/store/data.mdb     the policy store (common.db), an LMDB copy with compaction
 *   DIR/stats/*.csv        the closed statistics files the importer has not finished yet (stats.dir)
 *   DIR/statsdb/stats.duckdb  the statistics store (stats.db), a DuckDB copy made by its writer
 *                          (engine/stats/snapshot.ts); an LMDB stats.db not yet migrated is copied as
 *                          statsdb/data.mdb
 *   DIR/manifest.json      versions, sources, and every file's size and SHA-256: written last
 *
 * LMDB's copy reads one read transaction: it holds every transaction committed before it began, and
 * writers carry on meanwhile (they never wait for it). The API acknowledges a write only after its
 * commit, so every write acknowledged before the backup began is in it.
 *
 * Statistics: the DNS writers are first asked to close their current files (the rotation request
 * of `filterd stats-import`), so the queries logged before the backup began are in closed files.
 * The closed files are copied before the statistics database: a file imported and deleted between
 * the two copies is in the database copy, and a file copied before it was (partly) imported is
 * resumed from the database copy's ledger after a restore, so no row is counted twice or lost.
 */
import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { open } from 'lmdb'
import { sharesRedis, type Config } from '../../engine/config/index.js'
import { loadConfigFile } from '../../engine/features.js'
import { snapshotStatsDb } from '../../engine/stats/index.js'
import { closeCurrentParts, partsOpenedBy, recoverStaleParts } from '../../engine/querylog/index.js'
import { Store } from '../../engine/store/index.js'
import { commandArgs } from '../cli/command-args.js'
import { filterdVersion } from '../cli/version.js'
import {
  describeFiles,
  FORMAT,
  FORMAT_VERSION,
  fsyncPath,
  fsyncTree,
  listFiles,
  MANIFEST,
  PARTS,
  type Manifest
} from './manifest.js'

export const BACKUP_USAGE = `usage: filterd backup --config FILE [--wait-ms N] DIR

Copies this host's store (common.db) and statistics (stats.db, stats.dir) into DIR, which must
not exist or be empty, while the roles run. The manifest (DIR/manifest.json) is written last.
--wait-ms: how long to wait for the DNS writers to close their current statistics files (3000).
Restore with: filterd restore --config FILE DIR (docs/backup.md).`

/** Closed statistics files: `queries-….csv` (engine/querylog/files.ts). */
const CLOSED_CSV = /^queries-.*\.csv$/

function isEmptyOrAbsent(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0
}

/** An LMDB environment copied with compaction into `target` (a folder that will hold data.mdb). */
async function copyEnvironment(source: string, target: string): Promise<void> {
  mkdirSync(target, { recursive: true })
  const lock = join(source, 'lock.mdb')
  const hadLock = existsSync(lock)
  const env = open({ path: source, maxDbs: 64, readOnly: true })
  // Roles stopped, run as root: opening made the lock file, root's; the roles (user filterd) could
  // not open the store any more. It goes to the store's owner.
  if (!hadLock && process.getuid?.() === 0) {
    const { uid, gid } = statSync(join(source, 'data.mdb'))
    chownSync(lock, uid, gid)
  }
  try {
    await env.backup(target, true)
  } finally {
    await env.close()
  }
}

/** Asks the DNS writers to close their current files and waits until they have (up to waitMs). */
async function closeCurrentFiles(dir: string, waitMs: number): Promise<string[]> {
  await recoverStaleParts(dir)
  if (waitMs === 0) return await partsOpenedBy(dir, Date.now())
  return await closeCurrentParts(dir, waitMs)
}

/** Copies the closed CSV files; one the importer deleted meanwhile is in the database copy taken next. */
function copyClosedFiles(source: string, target: string): number {
  mkdirSync(target, { recursive: true })
  let copied = 0
  for (const name of readdirSync(source)) {
    if (!CLOSED_CSV.test(name)) continue
    try {
      copyFileSync(join(source, name), join(target, name))
      copied++
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw err
    }
  }
  return copied
}

export interface BackupResult {
  manifest: Manifest
  statsFiles: number
  stillOpen: string[]
}

/** Makes the backup of `config`'s host into `dir` (see the module comment). */
export async function backup(
  config: Readonly<Config>,
  dir: string,
  options: { waitMs?: number; snapshotWaitMs?: number } = {}
): Promise<BackupResult> {
  const started = new Date()
  const storePath = config.common.db
  if (!existsSync(join(storePath, 'data.mdb')))
    throw new Error(`no store at ${storePath} (common.db): nothing to back up`)
  if (!isEmptyOrAbsent(dir)) throw new Error(`${dir} is not empty: back up into a new or empty folder`)
  mkdirSync(dir, { recursive: true })

  const statsDir = existsSync(config.stats.dir) ? config.stats.dir : null
  let stillOpen: string[] = []
  let statsFiles = 0
  if (statsDir !== null) {
    stillOpen = await closeCurrentFiles(statsDir, options.waitMs ?? 3000)
    statsFiles = copyClosedFiles(statsDir, join(dir, PARTS.statsFiles))
  }
  const statsDb = existsSync(config.stats.db) ? config.stats.db : null
  if (statsDb !== null) {
    // The DuckDB store: copied by the api role when it holds it (the one writer), else by us.
    await snapshotStatsDb(statsDb, join(dir, PARTS.statsDb), options.snapshotWaitMs ?? 30_000)
    // A legacy LMDB stats.db that `filterd stats-migrate` has not moved in yet.
    if (existsSync(join(statsDb, 'data.mdb'))) await copyEnvironment(statsDb, join(dir, PARTS.statsDb))
  }
  await copyEnvironment(storePath, join(dir, PARTS.store))

  // What the copy holds, read from the copy itself.
  const copy = Store.open(join(dir, PARTS.store), { readOnly: true })
  let counts: Manifest['store']
  try {
    counts = { generation: copy.generation(), users: copy.userCount() }
  } finally {
    await copy.close()
  }
  // Opening the copy leaves a lock file beside it; it is no part of the backup (LMDB makes a new one).
  rmSync(join(dir, PARTS.store, 'lock.mdb'), { force: true })
  fsyncTree(dir)
  const files = listFiles(dir)
  const manifest: Manifest = {
    format: FORMAT,
    formatVersion: FORMAT_VERSION,
    filterd: filterdVersion(),
    node: process.versions.node,
    host: hostname(),
    config: config.source,
    started: started.toISOString(),
    finished: new Date().toISOString(),
    sources: { store: storePath, statsDb, statsFiles: statsDir },
    store: counts,
    redis: sharesRedis(config),
    files: await describeFiles(dir, files)
  }
  const tmp = join(dir, `${MANIFEST}.tmp`)
  writeFileSync(tmp, JSON.stringify(manifest, null, 2) + '\n')
  fsyncPath(tmp)
  renameSync(tmp, join(dir, MANIFEST))
  fsyncPath(dir)
  return { manifest, statsFiles, stillOpen }
}

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('backup', BACKUP_USAGE + '\n', argv, { 'wait-ms': { type: 'string' } }, { positionals: 1 })
  if (typeof args === 'number') return args
  const { values, config, positionals } = args
  const waitMs = values['wait-ms'] === undefined ? 3000 : Number(values['wait-ms'])
  if (!Number.isInteger(waitMs) || waitMs < 0) {
    process.stderr.write(BACKUP_USAGE + '\n')
    return 2
  }
  const dir = resolve(positionals[0]!)
  try {
    const r = await backup(loadConfigFile(config), dir, { waitMs })
    if (r.stillOpen.length > 0) {
      process.stderr.write(
        `filterd backup: statistics files still open after ${waitMs} ms, their rows are not in the backup: ${r.stillOpen.join(', ')}\n`
      )
    }
    const m = r.manifest
    process.stdout.write(
      `backup of ${m.sources.store} written to ${dir}: store generation ${m.store.generation}, ${m.store.users} users, ` +
        `statistics database ${m.sources.statsDb === null ? 'absent' : 'copied'}, ${r.statsFiles} statistics files; manifest ${join(dir, MANIFEST)}\n`
    )
    return 0
  } catch (err) {
    process.stderr.write(`filterd backup: ${(err as Error).message}\n`)
    return 1
  }
}
