/**
 * A daemon's log file: ISO 8601 `time` on every line, and the file reopened at its configured path
 * on SIGHUP (what logrotate's `postrotate` sends after renaming it). The real `filterd blockpage`.
 */
import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { startRole } from '../../engine/testing/daemon.js'
import { until } from '../../engine/testing/wait.js'
import { makeStore } from '../../blockpage/testing/fixture.js'
import { tempDir } from '../../engine/testing/temp.js'

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

function lines(file: string): Array<{ time?: unknown; msg?: string }> {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { time?: unknown; msg?: string })
}

test('a daemon logs ISO 8601 times and reopens its log file on SIGHUP', async (t: TestContext) => {
  const { dir, configFile } = await makeStore(t, { blockpage: ['log-level: info'] })
  const log = join(dir, 'blockpage.log')
  const role = await startRole(t, 'blockpage', configFile)
  const child = role.proc
  await until('the condition', () => lines(log).some((l) => l.msg === 'blockpage started'))
  for (const l of lines(log)) t.assert.match(String(l.time), ISO)

  renameSync(log, log + '.1')
  child.kill('SIGHUP')
  await until('the condition', () => existsSync(log))
  t.assert.strictEqual(child.exitCode, null, 'SIGHUP does not stop the daemon')
  child.kill('SIGTERM')
  const [code] = (await once(child, 'exit')) as [number | null]
  t.assert.strictEqual(code, 0, role.stderr)
  const fresh = lines(log)
  t.assert.ok(
    fresh.some((l) => l.msg === 'blockpage stopped'),
    JSON.stringify(fresh)
  )
  for (const l of fresh) t.assert.match(String(l.time), ISO)
  const rotated = lines(log + '.1')
  t.assert.ok(rotated.some((l) => l.msg === 'blockpage started'))
  t.assert.ok(!rotated.some((l) => l.msg === 'blockpage stopped'), 'nothing written to the renamed file after SIGHUP')
})

test('a process that logs to its file and exits at once leaves the line in the file and nothing on stderr', async (t: TestContext) => {
  // What a DNS front process whose start fails does: log the failure, exit. With an asynchronous
  // file destination the exit came before the file was open and printed a "sonic boom is not ready
  // yet" stack instead.
  const log = join(tempDir(t), 'quick.log')
  const logModule = new URL('../../engine/log/index.js', import.meta.url).href
  const script = `import { createLogger } from ${JSON.stringify(logModule)}
const logger = createLogger({ destination: ${JSON.stringify(log)}, level: 'info', role: 'dns.1' })
logger.error('dns front process failed to start')
process.exit(1)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  t.assert.strictEqual(code, 1)
  t.assert.strictEqual(stderr, '')
  t.assert.deepStrictEqual(
    lines(log).map((l) => l.msg),
    ['dns front process failed to start']
  )
})
