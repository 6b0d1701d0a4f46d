#!/usr/bin/env node
/**
 * filterd: one CLI for every role and offline command (docs/contract.md, "What the product is").
 *   filterd <role> --config FILE     run one daemon
 *   filterd all [--config FILE]      every role in one process tree (default: the demo config)
 *   filterd <command> …              offline commands (build-db, import, stats-import, client, …)
 */
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { listenerCount, type RoleName } from '../engine/config/index.js'
import { isEngineError } from '../engine/errors.js'
import { logStartFailure } from '../engine/log/index.js'
import { COMMANDS, loadCommand, ROLE_HELP, ROLE_NAMES } from './cli/roles.js'
import { ON_CRASH, type OnCrash } from './cli/role-tree.js'
import { filterdVersion } from './cli/version.js'

const DEMO_CONFIG = fileURLToPath(new URL('../../conf/demo.yaml', import.meta.url))

function usage(): string {
  const lines = [
    'usage: filterd <role> --config FILE',
    '       filterd all [--config FILE]        (default config: conf/demo.yaml, the quick start)',
    '       filterd <command> [options]',
    '       filterd check-config --config FILE [--json]',
    '       filterd --version',
    '       filterd <role or command> --help',
    '',
    'roles:'
  ]
  for (const r of ROLE_NAMES) lines.push(`  ${r.padEnd(14)} ${ROLE_HELP[r]}`)
  lines.push(`  ${'all'.padEnd(14)} every role above in one process tree`)
  lines.push('', 'commands:')
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(14)} ${c.help}`)
  lines.push(
    `  ${'check-config'.padEnd(14)} validate a config file and the folders it names (--json: print it with its defaults)`
  )
  lines.push('', "Config keys: docs/config.md. Logs: one JSON object per line, where each section's log key says.")
  return lines.join('\n')
}

/**
 * The role being started by `filterd <role> --config FILE`, once the command line names one: its
 * start failures are log lines (logStartFailure), not the plain text of the other commands.
 */
let startingRole: RoleName | undefined

/** The usage of one role, `all` or `check-config`. */
function subUsage(name: string): string {
  if (name === 'all') {
    return (
      'usage: filterd all [--config FILE] [--on-crash restart|stop]\n\nEvery role in one process tree (default config: conf/demo.yaml, the quick start).\n' +
      '--on-crash restart (the default): a role that dies is started again after a backoff (200 ms, doubling to\n' +
      '  30 s) for ever, the others keep running; only the dns role failing at its start or at its 5th restart\n' +
      '  within 60 s stops every role. stop: the first role that dies stops every role.'
    )
  }
  if (name === 'check-config') {
    return (
      "usage: filterd check-config --config FILE [--json]\n\nValidates a config file, the files it names and the roles' log and pid folders (as the user running it);\n" +
      'prints one line (config OK: …), or with --json the config with its defaults; exit 1 naming the key or file at fault.'
    )
  }
  return `usage: filterd ${name} --config FILE\n\n${ROLE_HELP[name as RoleName]}. Keys: docs/config.md.`
}

/** `--config FILE` (or `-c`), and `--help`, parsed one way (node:util parseArgs) for roles, all and check-config. */
function roleArgs(
  name: string,
  argv: string[]
): { config?: string; help: boolean; onCrash?: OnCrash; json: boolean } | string {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
        ...(name === 'all' ? { 'on-crash': { type: 'string' } } : {}),
        ...(name === 'check-config' ? { json: { type: 'boolean' } } : {})
      } as const,
      allowPositionals: false,
      strict: true
    })
    const onCrash = values['on-crash']
    if (onCrash !== undefined && !(ON_CRASH as readonly unknown[]).includes(onCrash)) {
      throw new Error(`--on-crash must be one of ${ON_CRASH.join(', ')} (got "${String(onCrash)}")`)
    }
    return {
      ...(values.config === undefined ? {} : { config: values.config }),
      help: values.help === true,
      json: values.json === true,
      ...(onCrash === undefined ? {} : { onCrash: onCrash as OnCrash })
    }
  } catch (err) {
    return `filterd ${name}: ${(err as Error).message}\n\n${subUsage(name)}\n`
  }
}

/**
 * What checking a config and running roles need, loaded only then: the config's feature checks and the
 * roles pull in most of the engine, which `--help`, `--version` and the commands do not need.
 */
async function loadRunning(): Promise<
  Pick<typeof import('../engine/features.js'), 'checkConfigFile' | 'loadConfigFile'> &
    Pick<typeof import('./cli/run-all.js'), 'runAll'> &
    Pick<typeof import('./cli/run-role.js'), 'runRole'>
> {
  const [features, all, role] = await Promise.all([
    import('../engine/features.js'),
    import('./cli/run-all.js'),
    import('./cli/run-role.js')
  ])
  return {
    checkConfigFile: features.checkConfigFile,
    loadConfigFile: features.loadConfigFile,
    runAll: all.runAll,
    runRole: role.runRole
  }
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(usage() + '\n')
    return first === undefined ? 2 : 0
  }
  if (first === '--version' || first === '-V' || first === 'version') {
    process.stdout.write(`filterd ${filterdVersion()} (Node.js ${process.versions.node})\n`)
    return 0
  }
  const wantsHelp = rest.includes('--help') || rest.includes('-h')
  if (first === 'collector' && rest[0] === 'usage') return await (await loadCommand('collector-usage'))(rest.slice(1))
  if (first in COMMANDS) {
    // client, import, backup and restore print their own, longer usage; the others answer with their line of the list.
    if (wantsHelp && (first === 'client' || COMMANDS[first]!.ownHelp === true))
      return await (
        await loadCommand(first)
      )(['--help'])
    if (wantsHelp && first !== 'import') {
      process.stdout.write(`usage: filterd ${first} [options]\n\n${COMMANDS[first]!.help}\n`)
      return 0
    }
    return await (
      await loadCommand(first)
    )(rest)
  }
  if (first !== 'all' && first !== 'check-config' && !(ROLE_NAMES as readonly string[]).includes(first)) {
    process.stderr.write(`filterd: unknown role or command "${first}"\n\n${usage()}\n`)
    return 2
  }
  const args = roleArgs(first, rest)
  if (typeof args === 'string') {
    process.stderr.write(args)
    return 2
  }
  if (args.help) {
    process.stdout.write(subUsage(first) + '\n')
    return 0
  }
  if (first === 'check-config') {
    if (args.config === undefined) {
      process.stderr.write('filterd check-config: --config FILE is required\n')
      return 2
    }
    const { checkConfigFile } = await loadRunning()
    const config = checkConfigFile(args.config)
    if (args.json) process.stdout.write(JSON.stringify(config, null, 2) + '\n')
    else
      process.stdout.write(
        `config OK: ${ROLE_NAMES.length} roles, ${listenerCount(config)} listeners (${config.source})\n`
      )
    return 0
  }
  if (first === 'all') {
    const file = args.config ?? DEMO_CONFIG
    const { runAll, loadConfigFile } = await loadRunning()
    return await runAll(loadConfigFile(file), file, args.onCrash)
  }
  if (args.config === undefined) {
    process.stderr.write(`filterd ${first}: --config FILE is required\n`)
    return 2
  }
  startingRole = first as RoleName
  const { runRole, loadConfigFile } = await loadRunning()
  await runRole(first as RoleName, loadConfigFile(args.config))
  return -1 // keep running until a signal
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (err: unknown) => {
    if (startingRole !== undefined && isEngineError(err) && err.code === 'ENGINE_ALREADY_RUNNING') {
      // Not a failure of the role but a refusal to start a second one: one line naming the pid, as
      // the README promises, with nothing for a person to dig it out of.
      process.stderr.write(`filterd: ${err.code}: ${err.message}\n`)
    } else if (startingRole !== undefined) {
      // The stack, when there is one, is in `err.stack` of the line.
      logStartFailure(startingRole, err, `filterd: ${err instanceof Error ? err.message : String(err)}`)
    } else if (isEngineError(err)) {
      process.stderr.write(`filterd: ${err.message}\n`)
    } else {
      process.stderr.write(`filterd: ${(err as Error).stack ?? String(err)}\n`)
    }
    process.exit(1)
  }
)
