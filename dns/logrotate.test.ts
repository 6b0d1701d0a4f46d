// logrotate against a multi-process DNS role: it renames the log file and sends SIGHUP to the pid in
// `proxy.pid` (the primary). Every front process must reopen the file at its configured path, not
// only the primary: each one writes its own lines. Checked on the processes' open files
// (/proc/PID/fd), so it does not depend on what they happen to log.
import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { existsSync, readdirSync, readlinkSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { startRole } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { releasedPort } from '../engine/testing/ports.js'
import { childrenOf } from '../engine/testing/processes.js'
import { world, writeConfigFile } from './testing/harness.js'

/** The paths of `pid`'s open files that start with `prefix`. */
function openFiles(pid: number, prefix: string): string[] {
  const out: string[] = []
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`)
      if (target.startsWith(prefix)) out.push(target)
    } catch {} // closed meanwhile
  }
  return out
}

test(
  'SIGHUP to a multi-process DNS role makes every front process reopen the renamed log file',
  { skip: process.platform !== 'linux' && 'needs /proc' },
  async (t: TestContext) => {
    const w = await world(t)
    const log = join(w.dir, 'proxy.log')
    const port = await releasedPort()
    const file = writeConfigFile(w, {
      listen: [`127.0.0.1:${port}`],
      proxy: { processes: 2, log, 'log-level': 'info' }
    })
    const role = await startRole(t, 'dns', file)
    const child = role.proc
    const primary = child.pid!
    let workers: number[] = []
    await until('the condition', () => {
      workers = childrenOf(primary)
      return workers.length === 2 && workers.every((p) => openFiles(p, log).length > 0)
    })
    for (const p of [primary, ...workers]) t.assert.deepStrictEqual(openFiles(p, log), [log], `pid ${p} writes ${log}`)

    renameSync(log, `${log}.1`)
    for (const p of [primary, ...workers])
      t.assert.deepStrictEqual(openFiles(p, log), [`${log}.1`], `pid ${p} still holds the renamed file`)
    child.kill('SIGHUP')
    await until(
      'the condition',
      () => existsSync(log) && [primary, ...workers].every((p) => openFiles(p, log).every((f) => f === log)),
      5000
    )
    for (const p of [primary, ...workers])
      t.assert.deepStrictEqual(openFiles(p, log), [log], `pid ${p} reopened ${log}`)
    t.assert.strictEqual(child.exitCode, null, 'SIGHUP does not stop the role')
    child.kill('SIGTERM')
    const [code] = (await once(child, 'exit')) as [number | null]
    t.assert.strictEqual(code, 0, role.stderr)
  }
)
