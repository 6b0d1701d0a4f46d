/**
 * `filterd reload --config FILE [--role ROLE]`: makes the running roles of this config read it again
 * (SIGHUP to the pid each role's pid file names; tools/cli/run-role.ts reloads). The file is
 * validated first, so a broken config is refused here, naming the key, before any role sees it.
 * Then it waits for each role's answer (the outcome file next to its pid file, reload-outcome.ts) and
 * prints, per role, what it applied, what it refused and why, and which keys need its restart.
 * Exit 0 when every signalled role applied the config (keys waiting for a restart included), 1 when
 * the config is invalid, no role of it runs, a role refused it or did not answer; 2 on usage.
 */
import type { RoleName } from '../../engine/config/index.js'
import { loadConfigFile } from '../../engine/features.js'
import { commandArgs } from './command-args.js'
import { readOutcome, type ReloadOutcome } from './reload-outcome.js'
import { ROLE_NAMES, sectionOf } from './roles.js'
import { livePid } from './run-role.js'

const USAGE =
  'usage: filterd reload --config FILE [--role ROLE]\n\n' +
  'Validates FILE, then signals (SIGHUP) every running role whose pid file it names, or only ROLE,\n' +
  'and prints what each applied live, refused (the key and why) and needs its restart for.\n' +
  'Exit 1 when a role refused the config or did not answer.\n'

/** How long a role may take to answer (a reload reopens files and may re-read certificates and lists). */
const ANSWER_MS = 30_000
const POLL_MS = 50

/** One role's answer as a line; `ok` false for a refusal. */
export function formatOutcome(role: RoleName, pid: number, o: ReloadOutcome): { line: string; ok: boolean } {
  const head = `${role}: pid ${pid}`
  const restart =
    o.restart.length === 0
      ? ''
      : `; needs a restart of the ${role} role (still running on the old value): ${o.restart.join(', ')}`
  if (o.result === 'refused') {
    const keys = o.refused?.keys.length ? ` ${o.refused.keys.join(', ')}` : ''
    return {
      line: `${head} REFUSED${keys}: ${o.refused?.reason ?? 'no reason given'}; still running on the previous config${restart}`,
      ok: false
    }
  }
  if (o.result === 'unchanged') return { line: `${head}: nothing this role reads changed`, ok: true }
  const applied = o.applied.length === 0 ? 'applied nothing live' : `applied ${o.applied.join(', ')}`
  return { line: `${head} ${applied}${restart}`, ok: true }
}

/** Resolves with the outcome `pid` writes after `before` (its last seq then), or undefined after ANSWER_MS. */
async function answerOf(pidFile: string, pid: number, before: number): Promise<ReloadOutcome | undefined> {
  const deadline = Date.now() + ANSWER_MS
  for (;;) {
    const o = readOutcome(pidFile)
    if (o !== undefined && o.pid === pid && o.seq > before) return o
    if (Date.now() > deadline) return undefined
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('reload', USAGE, argv, { role: { type: 'string' } })
  if (typeof args === 'number') return args
  const only = args.values.role
  if (only !== undefined && !(ROLE_NAMES as readonly string[]).includes(only)) {
    process.stderr.write(`filterd reload: --role must be one of ${ROLE_NAMES.join(', ')}\n`)
    return 2
  }
  let config
  try {
    config = loadConfigFile(args.config)
  } catch (err) {
    process.stderr.write(`filterd reload: refused, no role signalled: ${(err as Error).message}\n`)
    return 1
  }
  const waits: Array<Promise<boolean>> = []
  for (const role of ROLE_NAMES) {
    if (only !== undefined && role !== only) continue
    const pidFile = sectionOf(config, role).pid
    const pid = livePid(pidFile, role)
    if (pid === undefined) continue
    const last = readOutcome(pidFile)
    const before = last?.pid === pid ? last.seq : 0
    process.kill(pid, 'SIGHUP')
    waits.push(
      answerOf(pidFile, pid, before).then((o) => {
        if (o === undefined) {
          process.stdout.write(
            `${role}: pid ${pid} signalled (SIGHUP) but wrote no answer within ${ANSWER_MS / 1000} s; its log says what it did\n`
          )
          return false
        }
        const { line, ok } = formatOutcome(role, pid, o)
        process.stdout.write(line + '\n')
        return ok
      })
    )
  }
  if (waits.length === 0) {
    process.stderr.write(
      `filterd reload: no role of ${config.source} is running${only === undefined ? '' : ` (--role ${only})`}\n`
    )
    return 1
  }
  return (await Promise.all(waits)).every(Boolean) ? 0 : 1
}
