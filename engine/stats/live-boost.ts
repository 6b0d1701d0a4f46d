/**
 * The live path's deadline (from query to report at most 10 s). The import runs in the
 * background (`stats.import-priority: background`, nice 19) so that it never takes CPU from DNS; but on
 * a host whose cores other work keeps busy, nice 19 gets about 1.5% of a core, and a 3 s file of 20,000
 * q/s then waited 12-13.5 s (bench/results/2026-11-history.md, "From query to report").
 *
 * So an import run that is still busy with a live file `stats.live-boost-after` seconds after that file
 * was closed lifts the store's threads to nice 0 until the run ends (engine/stats/priority.ts). A file
 * closed more than `LIVE_WINDOW_MS` ago is a catch-up backlog (the api role was down, or the host fell
 * far behind): its goal is missed already, and importing it at normal priority would take CPU from DNS
 * for as long as the backlog lasts, so it stays in the background. On an idle host a live file is
 * imported within about a second of its close and the lift never happens.
 */
import { readdirSync } from 'node:fs'
import { closedAtOf } from '../querylog/index.js'

/** Files closed longer ago than this are a backlog, not the live path. */
export const LIVE_WINDOW_MS = 60_000

/**
 * Before an import run: arms the lift for the oldest closed file of `dir` if it is live, `afterMs` after
 * its close (at once when that is past). Returns the function that ends the run's lift (call it when the
 * run ends, whether it lifted or not). `afterMs` 0 turns the lift off.
 */
export function armLiveBoost(dir: string, afterMs: number, boost: (on: boolean) => void, now = Date.now()): () => void {
  if (afterMs <= 0) return () => {}
  let oldest = Infinity
  try {
    for (const name of readdirSync(dir)) oldest = Math.min(oldest, closedAtOf(name) ?? Infinity)
  } catch {
    return () => {} // no folder yet: nothing to import
  }
  if (oldest === Infinity || now - oldest > LIVE_WINDOW_MS) return () => {}
  let lifted = false
  const timer = setTimeout(
    () => {
      lifted = true
      boost(true)
    },
    Math.max(0, oldest + afterMs - now)
  )
  timer.unref()
  return () => {
    clearTimeout(timer)
    if (lifted) boost(false)
  }
}
