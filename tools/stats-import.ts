/**
 * `filterd stats-import --config FILE [--no-wait] [--wait-ms N]`: imports every closed statistics
 * file now, exactly once.
 *
 * One writer: the statistics store (DuckDB) is opened read-write by one process. When the api role
 * runs, it holds the store and imports every `stats.import-interval` seconds; this command then hands
 * the files to it: it waits (up to `--wait-ms` + 60 s) until the api role has taken in the files
 * that were closed, and reports their rows.
 *
 * To include the last minutes, it first asks the running DNS processes to close their current files:
 * it writes `<stats.dir>/rotate.request` (the time of the request), which every DNS writer checks
 * once a second, and waits (up to `--wait-ms`, default 3000) until no live process still has a
 * `.part` file opened before that time. No signal is needed, which also covers a cluster's children
 * whose pids are not in `proxy.pid`. `--no-wait` imports only what is closed already.
 * With a shared Redis store (`common.redis-ip` or `common.redis-sentinels`) it refuses (exit 1): the
 * sync role ships this host's files to Redis and every api role applies them, and a local import
 * would put them in this host's reports only (and take them from the others).
 * Exit codes: 0 done, 1 failed, 2 usage.
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sharesRedis } from '../engine/config/index.js'
import { loadConfigFile } from '../engine/features.js'
import { importClosedFiles, openStatsDb, statsDbOptions } from '../engine/stats/index.js'
import { closeCurrentParts, CLOSED_RE } from '../engine/querylog/index.js'
import { commandArgs } from './cli/command-args.js'

const USAGE = 'usage: filterd stats-import --config FILE [--no-wait] [--wait-ms N]\n'

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('stats-import', USAGE, argv, {
    'no-wait': { type: 'boolean' },
    'wait-ms': { type: 'string' }
  })
  if (typeof args === 'number') return args
  const { values, config: file } = args
  const waitArg = values['wait-ms']
  const waitMs = waitArg === undefined ? 3000 : Number(waitArg)
  if (!Number.isFinite(waitMs) || waitMs < 0) {
    process.stderr.write(USAGE)
    return 2
  }
  try {
    const config = loadConfigFile(file)
    if (sharesRedis(config)) {
      process.stderr.write(
        "filterd stats-import: refused: Redis is configured (common.redis-ip), so the sync role ships this host's statistics files to Redis and every api role applies them; a local import would reach this host's reports only\n"
      )
      return 1
    }
    const dir = config.stats.dir
    mkdirSync(dir, { recursive: true })
    if (values['no-wait'] !== true && waitMs > 0) {
      const open = await closeCurrentParts(dir, waitMs)
      if (open.length > 0)
        process.stderr.write(
          `filterd stats-import: still open after ${waitMs} ms, imported next time: ${open.join(', ')}\n`
        )
    }
    const db = openStatsDb(config.stats.db, statsDbOptions(config))
    try {
      try {
        await db.ready
      } catch (err) {
        if (!/lock/i.test((err as Error).message)) throw err
        return await handToWriter(dir, waitMs)
      }
      const r = await importClosedFiles(db, dir, config.stats.timezone)
      process.stdout.write(`imported ${r.rows} rows from ${r.files} files (${r.skipped} skipped, ${r.pruned} pruned)\n`)
    } finally {
      await db.close()
    }
    return 0
  } catch (err) {
    process.stderr.write(`filterd stats-import: ${(err as Error).message}\n`)
    return 1
  }
}

function closedFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => CLOSED_RE.test(n))
  } catch {
    return []
  }
}

/** Rows of a closed CSV file: its lines less the header (a file the writer already took counts 0). */
function rowsOf(path: string): number {
  try {
    const text = readFileSync(path, 'latin1')
    let lines = 0
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++
    return Math.max(0, lines - 1)
  } catch {
    return 0
  }
}

/** The store is held by its writer (the api role): wait until it has taken in the closed files. */
async function handToWriter(dir: string, waitMs: number): Promise<number> {
  const files = closedFiles(dir)
  const rows = files.reduce((n, f) => n + rowsOf(join(dir, f)), 0)
  const deadline = Date.now() + waitMs + 60_000
  for (;;) {
    const left = closedFiles(dir).filter((f) => files.includes(f))
    if (left.length === 0) break
    if (Date.now() > deadline) {
      process.stderr.write(
        `filterd stats-import: the statistics store is held by its writer (the api role), which has not taken in ${left.join(', ')} yet\n`
      )
      return 1
    }
    await sleep(200)
  }
  process.stdout.write(
    `imported ${rows} rows from ${files.length} files (by the api role, the statistics store's writer)\n`
  )
  return 0
}
