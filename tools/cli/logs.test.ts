/**
 * A daemon's log file: ISO 8601 `time` on every line, and the file reopened at its configured path
 * on SIGHUP (what logrotate's `postrotate` sends after renaming it). The real `filterd blockpage`.
 */
import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { FILTERD, until } from '../../engine/testing/daemon.js'
import { makeStore } from '../../blockpage/testing/fixture.js'

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

function lines (file: string): Array<{ time?: unknown, msg?: string }> {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { time?: unknown, msg?: string })
}

test('a daemon logs ISO 8601 times and reopens its log file on SIGHUP', async (t: TestContext) => {
  const { dir, configFile } = await makeStore(t, { blockpage: ['log-level: info'] })
  const log = join(dir, 'blockpage.log')
  const child = spawn(process.execPath, [FILTERD, 'blockpage', '--config', configFile], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString() })
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => { throw new Error(`filterd exited with ${String(code)}: ${stderr}`) })
  ])
  await until(() => lines(log).some((l) => l.msg === 'blockpage started'))
  for (const l of lines(log)) t.assert.match(String(l.time), ISO)

  renameSync(log, log + '.1')
  child.kill('SIGHUP')
  await until(() => existsSync(log))
  t.assert.strictEqual(child.exitCode, null, 'SIGHUP does not stop the daemon')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit') as [number | null]
  t.assert.strictEqual(code, 0, stderr)
  const fresh = lines(log)
  t.assert.ok(fresh.some((l) => l.msg === 'blockpage stopped'), JSON.stringify(fresh))
  for (const l of fresh) t.assert.match(String(l.time), ISO)
  const rotated = lines(log + '.1')
  t.assert.ok(rotated.some((l) => l.msg === 'blockpage started'))
  t.assert.ok(!rotated.some((l) => l.msg === 'blockpage stopped'), 'nothing written to the renamed file after SIGHUP')
})
