/**
 * `filterd reload --config FILE [--role ROLE]`: makes the running roles of this config read it again
 * (SIGHUP to the pid each role's pid file names; tools/cli/run-role.ts reloads). The file is
 * validated first, so a broken config is refused here, naming the key, before any role sees it.
 * Each role logs what it applied and what needs its restart. Exit 0 when at least one role was
 * signalled, 1 when the config is invalid or no role of it runs, 2 on usage.
 */
import { loadConfigFile } from '../../engine/features.js'
import { commandArgs } from './command-args.js'
import { ROLE_NAMES, sectionOf } from './roles.js'
import { livePid } from './run-role.js'

const USAGE =
  'usage: filterd reload --config FILE [--role ROLE]\n\n' +
  'Validates FILE, then signals (SIGHUP) every running role whose pid file it names, or only ROLE:\n' +
  'each reads the config again, applies what it can live and logs which keys need its restart.\n'

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
  let signalled = 0
  for (const role of ROLE_NAMES) {
    if (only !== undefined && role !== only) continue
    const pidFile = sectionOf(config, role).pid
    const pid = livePid(pidFile, role)
    if (pid === undefined) continue
    process.kill(pid, 'SIGHUP')
    signalled++
    process.stdout.write(`${role}: pid ${pid} signalled (SIGHUP); its log says what it applied\n`)
  }
  if (signalled === 0) {
    process.stderr.write(
      `filterd reload: no role of ${config.source} is running${only === undefined ? '' : ` (--role ${only})`}\n`
    )
    return 1
  }
  return 0
}
