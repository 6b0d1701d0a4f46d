#!/usr/bin/env node
/**
 * filterd: one CLI for every role and offline command (DESIGN.md, "What the product is").
 *   filterd <role> --config FILE     run one daemon
 *   filterd all [--config FILE]      every role in one process tree (default: the demo config)
 *   filterd <command> …              offline commands (build-db, import, stats-import, client, …)
 */
import { fileURLToPath } from 'node:url'
import { loadConfigFile, type RoleName } from '../engine/config/index.js'
import { isEngineError } from '../engine/errors.js'
import { logStartFailure } from '../engine/log/index.js'
import { COMMANDS, loadCommand, ROLE_HELP, ROLE_NAMES } from './cli/roles.js'
import { runAll } from './cli/run-all.js'
import { runRole } from './cli/run-role.js'

const DEMO_CONFIG = fileURLToPath(new URL('../../conf/demo.yaml', import.meta.url))

function usage (): string {
  const lines = [
    'usage: filterd <role> --config FILE',
    '       filterd all [--config FILE]        (default config: conf/demo.yaml, the quick start)',
    '       filterd <command> [options]',
    '       filterd check-config --config FILE',
    '',
    'roles:'
  ]
  for (const r of ROLE_NAMES) lines.push(`  ${r.padEnd(14)} ${ROLE_HELP[r]}`)
  lines.push(`  ${'all'.padEnd(14)} every role above in one process tree`)
  lines.push('', 'commands:')
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(14)} ${c.help}`)
  lines.push(`  ${'check-config'.padEnd(14)} validate a config file and print it with its defaults`)
  lines.push('', 'Config keys: docs/config.md. Logs: one JSON object per line, where each section\'s log key says.')
  return lines.join('\n')
}

/**
 * The role being started by `filterd <role> --config FILE`, once the command line names one: its
 * start failures are log lines (logStartFailure), not the plain text of the other commands.
 */
let startingRole: RoleName | undefined

function configArg (argv: string[]): string | undefined {
  const i = argv.findIndex((a) => a === '--config' || a === '-c')
  if (i >= 0) return argv[i + 1]
  const eq = argv.find((a) => a.startsWith('--config='))
  return eq?.slice('--config='.length)
}

async function main (argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(usage() + '\n')
    return first === undefined ? 2 : 0
  }
  if (first === 'collector' && rest[0] === 'usage') return await (await loadCommand('collector-usage'))(rest.slice(1))
  if (first in COMMANDS) return await (await loadCommand(first))(rest)
  if (first === 'check-config') {
    const file = configArg(rest)
    if (file === undefined) { process.stderr.write('filterd check-config: --config FILE is required\n'); return 2 }
    process.stdout.write(JSON.stringify(loadConfigFile(file), null, 2) + '\n')
    return 0
  }
  if (first === 'all') {
    const file = configArg(rest) ?? DEMO_CONFIG
    return await runAll(loadConfigFile(file), file)
  }
  if ((ROLE_NAMES as readonly string[]).includes(first)) {
    const file = configArg(rest)
    if (file === undefined) { process.stderr.write(`filterd ${first}: --config FILE is required\n`); return 2 }
    startingRole = first as RoleName
    await runRole(first as RoleName, loadConfigFile(file))
    return -1 // keep running until a signal
  }
  process.stderr.write(`filterd: unknown role or command "${first}"\n\n${usage()}\n`)
  return 2
}

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exit(code)
}, (err: unknown) => {
  if (startingRole !== undefined) {
    // The stack, when there is one, is in `err.stack` of the line.
    logStartFailure(startingRole, err, `filterd: ${err instanceof Error ? err.message : String(err)}`)
  } else if (isEngineError(err)) {
    process.stderr.write(`filterd: ${err.message}\n`)
  } else {
    process.stderr.write(`filterd: ${(err as Error).stack ?? String(err)}\n`)
  }
  process.exit(1)
})
