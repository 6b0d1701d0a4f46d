/**
 * Day-to-day operations against a running `filterd all` on the demo configuration (moved to free
 * ports and a temp folder): `filterd status` reads every role's pid file and /health; SIGHUP to a
 * role that logs to `-` reloads it and stops nothing; a dns role killed with SIGKILL is started again
 * by the parent and answers dig; `filterd reload` signals every role and refuses a broken config.
 */
import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dig, digMissing } from '../../engine/testing/dns.js'
import { demoConfig, demoPorts, startDemo } from '../../engine/testing/demo-config.js'
import { runCli } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'
import { until } from '../../engine/testing/wait.js'

const ROLES = ['dns', 'blockpage', 'api', 'catapi', 'local', 'collector'] as const

test(
  'filterd all: status, SIGHUP to a role logging to -, a killed dns role restarted, filterd reload',
  { timeout: 240_000 },
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-ops-')
    const ports = await demoPorts()
    const config = join(dir, 'demo.yaml')
    writeFileSync(config, demoConfig(dir, ports))
    const demo = await startDemo(t, config)
    const { child } = demo
    const pidOf = (role: string): number => Number(readFileSync(join(dir, 'run', `${role}.pid`), 'utf8').trim())
    const pids = Object.fromEntries(ROLES.map((r) => [r, pidOf(r)]))

    // 1. filterd status: every role running and healthy, with its pid, listeners and the store generation.
    let status = await runCli(['status', '--config', config])
    // The local service is healthy once its first update from the collector is applied.
    await until(
      'every role healthy',
      async () => (status = await runCli(['status', '--config', config])).code === 0,
      60_000,
      500
    )
    for (const role of ROLES.filter((r) => r !== 'collector'))
      t.assert.match(
        status.stdout,
        new RegExp(`^${role} +pid ${pids[role]}  up since \\S+  health ok`, 'm'),
        status.stdout
      )
    t.assert.match(status.stdout, /^dns +pid \d+ .*health ok  generation \d+$/m)
    t.assert.match(
      status.stdout,
      new RegExp(`dns metrics http 127\\.0\\.0\\.1:${ports.dnsMetrics} \\(/metrics, /health\\)`)
    )
    t.assert.match(status.stdout, /^collector +pid \d+ .*health -$/m)
    t.assert.match(status.stdout, /^replica: none \(one host/m)
    t.assert.match(status.stdout, /^last statistics import: \S+ \(\d+ files, \d+ rows\)$/m)
    t.assert.match(status.stdout, /all running roles are healthy\n$/)
    const json = JSON.parse((await runCli(['status', '--config', config, '--json'])).stdout) as {
      healthy: boolean
      roles: Array<{ role: string; health?: { ok: boolean; state: string; degraded: unknown[] } }>
    }
    t.assert.strictEqual(json.healthy, true)
    t.assert.deepStrictEqual(json.roles.find((r) => r.role === 'api')?.health?.degraded, [])

    // 2. SIGHUP to the dns role, which logs to `-`: it reloads (nothing changed) and every role keeps running.
    const lines = demo.output().length
    process.kill(pids.dns!, 'SIGHUP')
    await until(
      'the dns role logging its reload',
      () => demo.output().slice(lines).includes('dns: config reloaded'),
      20_000
    )
    for (const role of ROLES) t.assert.strictEqual(pidOf(role), pids[role], `${role} still runs as the same process`)
    t.assert.doesNotMatch(demo.output(), /stopping the others/)
    t.assert.strictEqual(child.exitCode, null)

    // 3. SIGKILL to the dns role: the parent starts it again, and it answers dig.
    const digBlocked = async (): Promise<string | undefined> =>
      (
        await dig([
          '@127.0.0.1',
          '-p',
          String(ports.dns),
          '+short',
          '+time=1',
          '+tries=1',
          'casino.example',
          'A'
        ]).catch(() => undefined)
      )?.trim()
    if ((await dig(['-v']).catch(() => undefined)) === undefined) digMissing(t)
    t.assert.strictEqual(await digBlocked(), '127.0.0.1')
    process.kill(pids.dns!, 'SIGKILL')
    await until(
      'the dns role restarted',
      () => {
        try {
          return pidOf('dns') !== pids.dns
        } catch {
          return false
        }
      },
      30_000,
      50
    )
    await until('the restarted dns role answering dig', async () => (await digBlocked()) === '127.0.0.1', 30_000, 100)
    t.assert.match(demo.output(), /the dns role exited \(SIGKILL\); starting it again in 200 ms/)
    for (const role of ROLES.filter((r) => r !== 'dns'))
      t.assert.strictEqual(pidOf(role), pids[role], `${role} was not restarted`)

    // 4. filterd reload: a broken config is refused before any role sees it; a good one signals every role.
    const good = readFileSync(config, 'utf8')
    writeFileSync(config, good.replace('  log-level: info', '  log-level: loud'))
    const refused = await runCli(['reload', '--config', config])
    t.assert.strictEqual(refused.code, 1)
    t.assert.match(refused.stderr, /refused, no role signalled: .*common\.log-level: must be one of/s)
    writeFileSync(config, good.replace('  log-level: info', '  log-level: warn'))
    const before = demo.output().length
    const reload = await runCli(['reload', '--config', config])
    t.assert.strictEqual(reload.code, 0, reload.stderr)
    for (const role of ROLES)
      t.assert.match(reload.stdout, new RegExp(`^${role}: pid \\d+ applied common\\.log-level$`, 'm'))
    const missing = (): string[] =>
      ROLES.filter((r) => !demo.output().slice(before).includes(`${r}: config reloaded: applied common.log-level`))
    await until('every role logging its reload', () => missing().length === 0, 20_000).catch(() => {})
    t.assert.deepStrictEqual(missing(), [], demo.output().slice(before))
    t.assert.strictEqual(child.exitCode, null)

    child.kill('SIGTERM')
    const [code] = (await once(child, 'exit')) as [number | null]
    t.assert.strictEqual(code, 0)
  }
)
