/**
 * Failpoints: the named places where a test bends the product (fewer rows per transaction, a shorter
 * step) or stops a process for ever so that it can kill it there (kill -9 inside a transaction, after a
 * commit, half way through a transfer). Each one is declared here, once, with what its value means, and
 * product code reads it through `failpoint(name)` only; production sets none.
 *
 * Why the environment carries them: the processes a test stops are daemons and CLI commands it starts
 * as children, and the environment is what a child inherits without a flag or a config key an operator
 * could set by mistake. One variable, FILTERD_FAILPOINTS (`name=value;name=value`), holds them all; a
 * test builds it with `failpointEnv` for a child, or sets one in its own process with `setFailpoint`.
 */
import { writeSync } from 'node:fs'

export const FAILPOINT_ENV = 'FILTERD_FAILPOINTS'

/** Every failpoint and what its value means. */
export const FAILPOINTS = {
  'stats.import.pause':
    '`<in-txn|after-commit>:<rows>`: the importer stops for ever in (before the commit) or after the first chunk transaction that brings its rows to at least <rows>, printing `PAUSED <phase> <rows>`',
  'stats.import.chunk-rows': 'rows per import transaction (default 20,000)',
  'stats.import.batch-bytes': 'bytes of closed files read in one import transaction (default 2 MiB)',
  'stats.fold.pause': '`1`: a day fold stops for ever inside its transaction, printing `PAUSED fold <day>`',
  'stats.fold.step-ms':
    'a fold step folds further days while it has lasted less than this many ms (default 1000; 0: one day per step)',
  'stats.month.pause':
    '`1`: a month build stops for ever inside its first transaction, printing `PAUSED month <kind> <month>`',
  'stats.month.chunk-rows': 'rows a month table is copied in at most (default 4,000,000)',
  'stats.raw-sort.chunk-rows': 'rows a raw hour is sorted in at most, in ranges of (user, time) (default 1,000,000)',
  'stats.compact-today.min-rows':
    "partial rows since today's last compaction that bring the next forward (default 200,000)",
  'stats.month.build':
    '`off`: the maintenance after an import builds no month table (tests that build them step by step)',
  'stats.reopen-ms':
    'a statistics store that cannot be used is opened again every this many ms (default: 1 s doubling to 1 min)',
  'replica.segment-fetch.pause':
    '`1`: a statistics segment transfer stops for ever half written, printing `PAUSED fetch <name>`',
  'roles.restart.max-backoff-ms':
    "the cap of `filterd all`'s restart backoff, when lower than its 30 s (tests that crash a role ten times in a minute)"
} as const

export type Failpoint = keyof typeof FAILPOINTS

function isFailpoint(name: string): name is Failpoint {
  return Object.hasOwn(FAILPOINTS, name)
}

/** The failpoints `text` sets; an unknown name throws, so that a misspelt one does not silently test nothing. */
function parseFailpoints(text: string | undefined): Map<Failpoint, string> {
  const out = new Map<Failpoint, string>()
  for (const pair of (text ?? '').split(';')) {
    if (pair.trim() === '') continue
    const eq = pair.indexOf('=')
    const name = (eq < 0 ? pair : pair.slice(0, eq)).trim()
    if (!isFailpoint(name))
      throw new Error(`${FAILPOINT_ENV} names an unknown failpoint "${name}" (engine/failpoints.ts lists them)`)
    out.set(name, eq < 0 ? '' : pair.slice(eq + 1).trim())
  }
  return out
}

function formatFailpoints(points: ReadonlyMap<Failpoint, string>): string {
  return [...points].map(([name, value]) => `${name}=${value}`).join(';')
}

/** The value failpoint `name` is set to in this process, or undefined. */
export function failpoint(name: Failpoint): string | undefined {
  return parseFailpoints(process.env[FAILPOINT_ENV]).get(name)
}

/** Failpoint `name` as a finite number, or undefined when it is not set (or not a number). */
export function failpointNumber(name: Failpoint): number | undefined {
  const value = failpoint(name)
  if (value === undefined || value === '') return undefined
  const n = Number(value)
  return Number.isFinite(n) ? n : undefined
}

/**
 * Stops this process for ever where it stands, after printing `line` on stdout (the test waits for it,
 * then kills the process). Atomics.wait blocks the thread itself: no timer, no I/O callback and no
 * `finally` runs, exactly as when the process is killed at this instruction.
 */
export function stopHere(line: string): never {
  writeSync(1, `${line}\n`)
  const cell = new Int32Array(new SharedArrayBuffer(4))
  for (;;) Atomics.wait(cell, 0, 0)
}

/** Sets (or with undefined, clears) failpoint `name` in this process and in the children it starts later. */
export function setFailpoint(name: Failpoint, value: string | undefined): void {
  const points = parseFailpoints(process.env[FAILPOINT_ENV])
  if (value === undefined) points.delete(name)
  else points.set(name, value)
  if (points.size === 0) delete process.env[FAILPOINT_ENV]
  else process.env[FAILPOINT_ENV] = formatFailpoints(points)
}

/**
 * The environment entry for a child process: the failpoints this process has, with `points` set over them
 * (a name given undefined is cleared), as a child inherits the rest of the environment.
 */
export function failpointEnv(points: Partial<Record<Failpoint, string | undefined>>): Record<string, string> {
  const map = parseFailpoints(process.env[FAILPOINT_ENV])
  for (const [name, value] of Object.entries(points)) {
    if (!isFailpoint(name)) continue
    if (value === undefined) map.delete(name)
    else map.set(name, value)
  }
  return { [FAILPOINT_ENV]: formatFailpoints(map) }
}
