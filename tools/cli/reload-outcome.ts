/**
 * What a role did with its last config reload, written by the role (run-role.ts) next to its pid file
 * (`/run/filterd/dns.pid` → `/run/filterd/dns.reload.json`) and read by `filterd reload`, which waits
 * for it after its SIGHUP, and by `filterd status`, which shows a restart still pending.
 *
 * A file rather than a control endpoint: every role has a pid file and the CLI already reads it, the
 * CLI must not need a listener (the collector has none) nor API credentials, and a file written by
 * rename is never read half-written. `pid` and `seq` (one more per reload the process handled) let the
 * CLI tell the answer to its signal from an older one, also one left by an earlier process.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs'

export interface ReloadOutcome {
  /** The role process that wrote it. */
  readonly pid: number
  /** 1 for its first reload, one more for each later one. */
  readonly seq: number
  /** When it finished (ISO 8601 UTC). */
  readonly at: string
  /** applied: the changed keys it reads are applied or wait for a restart; unchanged: none of them changed; refused: it runs on the previous config. */
  readonly result: 'applied' | 'unchanged' | 'refused'
  /** Keys applied live. */
  readonly applied: readonly string[]
  /** Keys changed in the file that wait for a restart of the role (it runs on their old values). */
  readonly restart: readonly string[]
  /** With `refused`: the keys it was applying (none when the file did not load) and why. */
  readonly refused?: { readonly keys: readonly string[]; readonly reason: string }
}

/** The outcome file of the role whose pid file is `pidFile`. */
export function outcomeFile(pidFile: string): string {
  return `${pidFile.endsWith('.pid') ? pidFile.slice(0, -4) : pidFile}.reload.json`
}

/** Writes `outcome` (temporary file, then rename); throws what the file system says. */
export function writeOutcome(pidFile: string, outcome: ReloadOutcome): void {
  const file = outcomeFile(pidFile)
  writeFileSync(`${file}.tmp`, JSON.stringify(outcome) + '\n')
  renameSync(`${file}.tmp`, file)
}

/** The last outcome written next to `pidFile`, or undefined (none yet, or not one of ours). */
export function readOutcome(pidFile: string): ReloadOutcome | undefined {
  try {
    const o = JSON.parse(readFileSync(outcomeFile(pidFile), 'utf8')) as Partial<ReloadOutcome>
    return typeof o.pid === 'number' && typeof o.seq === 'number' && typeof o.result === 'string'
      ? (o as ReloadOutcome)
      : undefined
  } catch {
    return undefined
  }
}
