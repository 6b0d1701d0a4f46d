/**
 * What `filterd all` knows of a role it keeps restarting, for `filterd status`: a small JSON file
 * beside the role's pid file (`api.pid` → `api.restarts.json`), written by the parent at each death
 * of the role and removed once the role has run well for STABLE_MS (or the tree stops). The role's
 * own process cannot write it: it is the one that died.
 *
 * And the backoff of a role other than dns: it is started again for ever (statistics, the API or the
 * console being down must never take DNS with them), after a delay doubling from FIRST_BACKOFF_MS up
 * to MAX_BACKOFF_MS, so a role that cannot start costs one attempt every 30 s.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, basename, join } from 'node:path'
import { failpointNumber } from '../../engine/failpoints.js'

export const FIRST_BACKOFF_MS = 200
export const MAX_BACKOFF_MS = 30_000
/** A role that ran this long after its start is well again: its next death starts the backoff anew. */
export const STABLE_MS = 60_000

export interface RestartState {
  role: string
  /** Deaths in a row, none of them after a run of STABLE_MS. */
  failures: number
  /** `code 1`, `SIGKILL`, or `exited during its start (code 1)`. */
  lastExit: string
  lastExitAt: string
  nextStartAt: string
  /** The `filterd all` process that restarts it. */
  supervisor: number
}

/** `/run/filterd/api.pid` → `/run/filterd/api.restarts.json`. */
export function restartStatePath(pidFile: string): string {
  return join(dirname(pidFile), `${basename(pidFile).replace(/\.pid$/, '')}.restarts.json`)
}

/**
 * The backoff's cap: MAX_BACKOFF_MS, or lower under the failpoint `roles.restart.max-backoff-ms` (tests that
 * crash a role ten times in a minute, which the 30 s cap would spread over three).
 */
function maxBackoffMs(): number {
  const lower = failpointNumber('roles.restart.max-backoff-ms')
  return lower !== undefined && lower >= FIRST_BACKOFF_MS ? Math.min(lower, MAX_BACKOFF_MS) : MAX_BACKOFF_MS
}

/** The delay before the next start after `failures` deaths in a row. */
export function backoffMs(failures: number): number {
  return Math.min(maxBackoffMs(), FIRST_BACKOFF_MS * 2 ** Math.max(0, Math.min(failures - 1, 20)))
}

export function writeRestartState(pidFile: string, state: RestartState): void {
  try {
    writeFileSync(restartStatePath(pidFile), JSON.stringify(state) + '\n')
  } catch {
    // The pid folder not writable: the log line the parent printed still says it.
  }
}

export function clearRestartState(pidFile: string): void {
  rmSync(restartStatePath(pidFile), { force: true })
}

/** The state `filterd all` left for the role of `pidFile`, when the `filterd all` that wrote it still runs. */
export function readRestartState(pidFile: string): RestartState | undefined {
  let state: Partial<RestartState>
  try {
    state = JSON.parse(readFileSync(restartStatePath(pidFile), 'utf8')) as Partial<RestartState>
  } catch {
    return undefined
  }
  if (typeof state.supervisor !== 'number' || typeof state.failures !== 'number') return undefined
  try {
    process.kill(state.supervisor, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return undefined
  }
  return state as RestartState
}
