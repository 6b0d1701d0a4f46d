/**
 * `filterd restore --config FILE [--force] DIR`: puts a backup made by `filterd backup` back where
 * the config's common.db, stats.db and stats.dir say (docs/backup.md).
 *
 * It refuses, changing nothing:
 *   - a folder that is not a complete, unchanged backup (manifest missing, a file missing, changed
 *     or not listed: tools/backup/manifest.ts);
 *   - while a role of this config runs (its pid file names a live filterd of that role), or while
 *     any process has the target store or statistics database open (LMDB's reader table names it):
 *     swapping an LMDB file under a running reader would serve a mix of two stores;
 *   - a target folder that is not empty, unless --force, which moves it aside to
 *     `<folder>-before-restore-<time>` (nothing is deleted).
 *
 * Each part is copied into a staging folder beside its target, checked (the store opens and holds
 * the manifest's generation and user count), flushed to disk, and renamed into place. Run as root,
 * the restored files are given to the owner of the target's parent folder (the `filterd` user of
 * /var/lib/filterd under systemd's StateDirectory), so the daemons can open them.
 */
import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync
} from 'node:fs'
import { spawnSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { type Config } from '../../engine/config/index.js'
import { loadConfigFile } from '../../engine/features.js'
import { Store } from '../../engine/store/index.js'
import { commandArgs } from '../cli/command-args.js'
import { ROLE_NAMES, sectionOf } from '../cli/roles.js'
import { livePid } from '../cli/run-role.js'
import { BackupInvalid, fsyncPath, fsyncTree, listFiles, PARTS, verifyBackup, type Manifest } from './manifest.js'

export const RESTORE_USAGE = `usage: filterd restore --config FILE [--force] DIR
       filterd restore --check DIR

Puts the backup in DIR (made by filterd backup) back into this config's common.db, stats.db and
stats.dir. Stop every role first (systemctl stop 'filterd@*'). Refuses a backup that is incomplete
or changed, and target folders that are not empty unless --force, which moves them aside to
<folder>-before-restore-<time>. --check only verifies DIR against its manifest. docs/backup.md.`

/** Refusals that change nothing: the message says what to do. */
export class RestoreRefused extends Error {}

/** Reads the reader table of the environment at `path` in a child process; undefined when it cannot. */
function readerTablePids(path: string): number[] | undefined {
  // Without a lock file no process has it open, and opening it would create one (as root: one the
  // daemons could not open).
  if (!existsSync(join(path, 'lock.mdb'))) return []
  // A child: lmdb crashes the process (SIGSEGV) on a data file whose meta pages are damaged, the very
  // store a restore replaces.
  const script = `import { open } from ${JSON.stringify(import.meta.resolve('lmdb'))}
const env = open({ path: process.argv[1], readOnly: true, maxDbs: 64 })
env.readerCheck()
process.stdout.write(env.readerList())`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, path], {
    encoding: 'utf8',
    timeout: 10_000
  })
  if (r.status !== 0) return undefined
  const pids: number[] = []
  for (const line of r.stdout.split('\n').slice(1)) {
    const pid = Number(line.trim().split(/\s+/)[0])
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && pid !== r.pid) pids.push(pid)
  }
  return pids
}

/**
 * Pids (other than ours) that have the LMDB environment at `path` open: those that map its data
 * file (/proc/PID/maps on Linux: a process maps it from opening the environment to closing it), and
 * those in its reader table. A process whose maps this user may not read (a role holding
 * CAP_NET_BIND_SERVICE, seen from the filterd user) is covered by the reader table; when that
 * cannot be read either (a damaged store), every such filterd process counts, to be safe.
 */
export function lmdbOpeners(path: string): number[] {
  const data = join(path, 'data.mdb')
  if (!existsSync(data)) return []
  const pids = new Set<number>()
  const unreadable: number[] = []
  if (existsSync('/proc/self/maps')) {
    const mapped = ` ${realpathSync(data)}\n`
    for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      const pid = Number(p)
      if (pid === process.pid) continue
      try {
        if (readFileSync(`/proc/${p}/maps`, 'utf8').includes(mapped)) pids.add(pid)
      } catch (err) {
        if ((err as { code?: string }).code !== 'EACCES') continue // gone meanwhile
        try {
          if (/(^|\/)filterd(\.js)?\0/.test(readFileSync(`/proc/${p}/cmdline`, 'latin1'))) unreadable.push(pid)
        } catch {
          /* gone meanwhile */
        }
      }
    }
  }
  const table = readerTablePids(path)
  for (const pid of table ?? unreadable) pids.add(pid)
  return [...pids].sort((x, y) => x - y)
}

/**
 * Pids (other than ours) with the DuckDB statistics store in `path` open: DuckDB holds its file
 * open (no mapping), so /proc/PID/fd tells (Linux; elsewhere none are found).
 */
export function duckdbOpeners(path: string): number[] {
  const file = join(path, 'stats.duckdb')
  if (!existsSync(file) || !existsSync('/proc/self/fd')) return []
  const real = realpathSync(file)
  const pids: number[] = []
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    const pid = Number(p)
    if (pid === process.pid) continue
    try {
      for (const fd of readdirSync(`/proc/${p}/fd`)) {
        if (readlinkSync(`/proc/${p}/fd/${fd}`) === real) {
          pids.push(pid)
          break
        }
      }
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return pids
}

interface Target {
  part: string
  path: string
  label: string
}

function targetsOf(config: Readonly<Config>): Target[] {
  return [
    { part: PARTS.store, path: config.common.db, label: 'common.db' },
    { part: PARTS.statsDb, path: config.stats.db, label: 'stats.db' },
    { part: PARTS.statsFiles, path: config.stats.dir, label: 'stats.dir' }
  ]
}

function isEmptyOrAbsent(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0
}

/** Everything that must be true before anything is changed; throws RestoreRefused. */
function preflight(config: Readonly<Config>, targets: readonly Target[], force: boolean): void {
  const running: string[] = []
  for (const role of ROLE_NAMES) {
    const path = sectionOf(config, role).pid
    const pid = livePid(path, role)
    if (pid !== undefined) running.push(`${role} (pid ${pid}, pid file ${path})`)
  }
  if (running.length > 0)
    throw new RestoreRefused(
      `roles of this config are running: ${running.join(', ')}; stop them first (systemctl stop 'filterd@*', or kill PID)`
    )
  for (const t of targets.filter((x) => x.part !== PARTS.statsFiles)) {
    const pids = [...new Set([...lmdbOpeners(t.path), ...duckdbOpeners(t.path)])].sort((x, y) => x - y)
    if (pids.length > 0)
      throw new RestoreRefused(
        `${t.path} (${t.label}) is open by pid ${pids.join(', ')}; stop every process using it first`
      )
  }
  if (!force) {
    const busy = targets.filter((t) => !isEmptyOrAbsent(t.path))
    if (busy.length > 0) {
      throw new RestoreRefused(
        `not empty: ${busy.map((t) => `${t.path} (${t.label})`).join(', ')}; restore into empty folders, or pass --force to move them aside first`
      )
    }
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:.]/g, '')
}

/** Gives the tree to the owner of `parent` when we are root and it is someone else. */
function chownLikeParent(tree: string, parent: string): void {
  if (process.getuid?.() !== 0) return
  const { uid, gid } = statSync(parent)
  if (uid === 0 && gid === 0) return
  chownSync(tree, uid, gid)
  for (const f of listFiles(tree)) chownSync(join(tree, f), uid, gid)
}

/** Opens the staged store and checks it is the manifest's. */
async function checkStore(path: string, manifest: Manifest): Promise<void> {
  const store = Store.open(path, { readOnly: true })
  try {
    const got = { generation: store.generation(), users: store.userCount() }
    if (got.generation !== manifest.store.generation || got.users !== manifest.store.users) {
      throw new BackupInvalid(
        `the restored store holds generation ${got.generation} and ${got.users} users; the manifest says ${manifest.store.generation} and ${manifest.store.users}`
      )
    }
  } finally {
    await store.close()
  }
  rmSync(join(path, 'lock.mdb'), { force: true })
}

export interface RestoreResult {
  manifest: Manifest
  movedAside: string[]
}

export async function restore(
  config: Readonly<Config>,
  dir: string,
  options: { force?: boolean } = {}
): Promise<RestoreResult> {
  const manifest = await verifyBackup(dir)
  const targets = targetsOf(config)
  preflight(config, targets, options.force === true)
  const when = stamp()
  const movedAside: string[] = []
  const staged: Array<{ target: Target; staging: string }> = []
  try {
    for (const t of targets) {
      const parent = dirname(t.path)
      mkdirSync(parent, { recursive: true })
      // No dot in the name: lmdb-js would take a path with an extension for a file, not a folder.
      const staging = `${t.path}-restoring-${process.pid}`
      rmSync(staging, { recursive: true, force: true })
      mkdirSync(staging)
      staged.push({ target: t, staging })
      const source = join(dir, t.part)
      if (existsSync(source))
        for (const f of listFiles(source)) {
          mkdirSync(dirname(join(staging, f)), { recursive: true })
          copyFileSync(join(source, f), join(staging, f))
        }
      if (t.part === PARTS.store) await checkStore(staging, manifest)
      chownLikeParent(staging, parent)
      fsyncTree(staging)
    }
  } catch (err) {
    for (const s of staged) rmSync(s.staging, { recursive: true, force: true })
    throw err
  }
  // Every part is staged and checked: now swap them in.
  for (const { target, staging } of staged) {
    if (existsSync(target.path)) {
      if (readdirSync(target.path).length === 0) {
        rmdirSync(target.path)
      } else {
        const aside = `${target.path}-before-restore-${when}`
        renameSync(target.path, aside)
        movedAside.push(aside)
      }
    }
    renameSync(staging, target.path)
    fsyncPath(dirname(target.path))
  }
  return { manifest, movedAside }
}

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs(
    'restore',
    RESTORE_USAGE + '\n',
    argv,
    { force: { type: 'boolean' }, check: { type: 'boolean' } },
    { positionals: 1, configOptional: true }
  )
  if (typeof args === 'number') return args
  const { values, config: configFile, positionals } = args
  if (values.check === true) {
    const dir = resolve(positionals[0]!)
    try {
      const m = await verifyBackup(dir)
      process.stdout.write(
        `${dir}: a complete backup of ${m.sources.store} on ${m.host}, ${m.finished} (filterd ${m.filterd}): ${m.files.length} files match the manifest; store generation ${m.store.generation}, ${m.store.users} users\n`
      )
      return 0
    } catch (err) {
      process.stderr.write(`filterd restore: ${(err as Error).message}\n`)
      return 1
    }
  }
  if (configFile === undefined) {
    process.stderr.write(RESTORE_USAGE + '\n')
    return 2
  }
  const dir = resolve(positionals[0]!)
  try {
    const config = loadConfigFile(configFile)
    const r = await restore(config, dir, { force: values.force === true })
    const m = r.manifest
    process.stdout.write(
      `restored the backup of ${m.finished} (filterd ${m.filterd}, host ${m.host}) into ${config.common.db}, ${config.stats.db} and ${config.stats.dir}: ` +
        `store generation ${m.store.generation}, ${m.store.users} users\n`
    )
    for (const a of r.movedAside)
      process.stdout.write(`the previous contents are in ${a} (delete it once the restored host is checked)\n`)
    if (m.redis) {
      process.stdout.write(
        'this backup is a Redis replica: start the sync role first; it catches up from Redis, or bootstraps from it. ' +
          'If Redis lost its data, run filterd redis-seed on the host with the most current replica (docs/operations-redis.md)\n'
      )
    }
    return 0
  } catch (err) {
    process.stderr.write(`filterd restore: ${(err as Error).message}\n`)
    return 1
  }
}
