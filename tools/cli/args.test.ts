/**
 * The command line, parsed one way: every role and command answers `--help` with exit 0 (through
 * `filterd`, and each offline command's own module too), and an unknown option is refused with
 * exit 2 naming it (node:util parseArgs, strict), instead of being ignored.
 */
import { test, type TestContext } from 'node:test'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO, runCli } from '../../engine/testing/daemon.js'
import { COMMANDS, ROLE_NAMES } from './roles.js'

/** Runs a command module's own `run(argv)` (bypassing filterd.ts's dispatch). */
function direct(name: string, argv: string[]): { code: number | null; stdout: string; stderr: string } {
  const url = pathToFileURL(join(REPO, 'dist/tools/cli', COMMANDS[name]!.module)).href
  const script = `const m = await import(${JSON.stringify(url)}); process.exitCode = await (m.run ?? m.runImport)(${JSON.stringify(argv)})`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The offline commands this file checks module by module (each parses with node:util parseArgs). */
const OFFLINE = [
  'build-db',
  'import',
  'stats-import',
  'client',
  'api-client',
  'redis-seed',
  'collector-usage',
  'backup',
  'restore'
]

test('every role, `all`, `check-config` and every command answers --help with exit 0', async (t: TestContext) => {
  const names = [...ROLE_NAMES, 'all', 'check-config', ...Object.keys(COMMANDS)]
  const calls = names.flatMap((name) => ['--help', '-h'].map((flag) => [name, flag] as const))
  // Four at a time: each is a process start, and sixty in a row take minutes on a busy machine.
  for (let i = 0; i < calls.length; i += 4) {
    await Promise.all(
      calls.slice(i, i + 4).map(async ([name, flag]) => {
        const r = await runCli([name, flag])
        t.assert.strictEqual(r.code, 0, `${name} ${flag}: ${r.stderr}`)
        t.assert.match(r.stdout, /usage/i, `${name} ${flag}`)
      })
    )
  }
  t.assert.strictEqual((await runCli(['collector', 'usage', '--help'])).code, 0)
})

test('each offline command module answers --help itself and refuses an unknown option naming it', async (t: TestContext) => {
  for (const name of OFFLINE) {
    const help = direct(name, ['--help'])
    t.assert.strictEqual(help.code, 0, `${name} --help: ${help.stderr}`)
    t.assert.match(help.stdout, /usage/i, name)
    const args =
      name === 'client' || name === 'api-client'
        ? ['list', '--bogus-option']
        : name === 'import'
          ? ['hosts', '--bogus-option']
          : ['--bogus-option']
    const bad = await runCli([name, ...args])
    t.assert.strictEqual(bad.code, 2, `${name} --bogus-option: ${bad.stderr}`)
    t.assert.match(bad.stderr, /--bogus-option/, name)
  }
})

test('--config=FILE is read like --config FILE', async (t: TestContext) => {
  // A missing file: the command got as far as reading it, so the option was understood.
  for (const name of ['build-db', 'stats-import', 'redis-seed']) {
    const r = await runCli([name, '--config=/nonexistent/filterd.yaml'])
    t.assert.strictEqual(r.code, 1, `${name}: ${r.stderr}`)
    t.assert.match(r.stderr, /nonexistent/, name)
  }
})
