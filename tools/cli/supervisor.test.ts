/**
 * `filterd all` keeps DNS up whatever another role does: an api role that cannot start (its port
 * held by another program) is started again and again with a growing, capped backoff, far past the
 * five restarts a minute that once stopped the whole tree; `filterd status` shows it restarting with
 * its last exit; every DNS query sent meanwhile is answered; and once its port is free it runs again.
 */
import { test, type TestContext } from 'node:test'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { query, udpAsk } from '../../engine/testing/dns.js'
import { demoConfig, demoPorts } from '../../engine/testing/demo-config.js'
import { FILTERD, runCli } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'
import { until } from '../../engine/testing/wait.js'

/** `filterd all --config config`, once it printed that it runs; `out.text` grows with its output. */
async function startAll(t: TestContext, config: string): Promise<{ child: ChildProcess; out: { text: string } }> {
  const child = spawn(process.execPath, [FILTERD, 'all', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
  const out = { text: '' }
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out.text += d
  })
  child.stderr.resume()
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  await until('filterd all running', () => out.text.includes('Stop with Ctrl-C.') || child.exitCode !== null, 120_000)
  t.assert.strictEqual(child.exitCode, null, out.text)
  return { child, out }
}

test(
  'filterd all: an api role failing at every start is restarted with backoff, shown as restarting, and DNS answers every query throughout',
  { timeout: 300_000 },
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-supervisor-')
    const ports = await demoPorts()
    const config = join(dir, 'demo.yaml')
    writeFileSync(config, demoConfig(dir, ports))
    // Another program holds the api role's port: each of its starts ends in ENGINE_LISTEN.
    const squatter = createServer()
    squatter.listen(ports.api, '127.0.0.1')
    await once(squatter, 'listening')
    t.after(() => squatter.close())

    const { child, out: printed } = await startAll(t, config)
    const out = (): string => printed.text
    t.assert.match(out(), /^ {2}api +not running: restarting after failures/m)

    // DNS queries, one after another, for as long as the api role fails and comes back.
    let asked = 0
    const unanswered: string[] = []
    let querying = true
    const queries = (async () => {
      for (let id = 1; querying; id++) {
        asked++
        try {
          await udpAsk(ports.dns!, query('example.org', 'A', { id: id & 0xffff }), '127.0.0.1', 5000)
        } catch (err) {
          unanswered.push(`query ${id}: ${(err as Error).message}`)
        }
      }
    })()

    const failures = (): number => out().match(/the api role exited \(exited during its start/g)?.length ?? 0
    await until('seven failed starts of the api role', () => failures() >= 7 || child.exitCode !== null, 120_000, 100)
    t.assert.strictEqual(child.exitCode, null, `filterd all still runs:\n${out()}`)
    t.assert.match(out(), /starting it again in 12800 ms \(7 failures in a row; the others keep running\)/)
    t.assert.doesNotMatch(out(), /stopping/)

    const status = await runCli(['status', '--config', config])
    t.assert.strictEqual(status.code, 1, status.stdout)
    t.assert.match(status.stdout, /^dns +pid \d+ .*health ok/m)
    t.assert.match(
      status.stdout,
      /^api +RESTARTING: exited during its start \(code \d+\) at \S+, \d+ failures in a row; filterd all \(pid \d+\) starts it again at \S+/m
    )

    // Its port free again: the next attempt (at most 30 s later) runs, and status shows it running.
    squatter.close()
    await until(
      'the api role running again',
      async () => /^api +pid \d+/m.test((await runCli(['status', '--config', config])).stdout),
      90_000,
      1000
    )
    querying = false
    await queries
    t.assert.ok(asked > 20, `${asked} queries asked`)
    t.assert.deepStrictEqual(unanswered, [], `${unanswered.length} of ${asked} DNS queries unanswered`)

    child.kill('SIGTERM')
    const [code] = (await once(child, 'exit')) as [number | null]
    t.assert.strictEqual(code, 0)
    t.assert.ok(!existsSync(join(dir, 'run', 'api.restarts.json')), 'the restart state is removed with the tree')
  }
)

test(
  'filterd all with a damaged stats.duckdb: DNS answers, the policy API works, the reports answer 503 API_STATS_UNAVAILABLE',
  { timeout: 240_000 },
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-supervisor-stats-')
    const ports = await demoPorts()
    const config = join(dir, 'demo.yaml')
    writeFileSync(config, demoConfig(dir, ports))
    // Garbage in its first 4 KiB, where DuckDB's header is.
    mkdirSync(join(dir, 'statsdb'), { recursive: true })
    writeFileSync(join(dir, 'statsdb', 'stats.duckdb'), Buffer.alloc(16 * 1024, 0x5a))
    const { child, out } = await startAll(t, config)
    t.assert.match(out.text, /^ {2}api +api http 127\.0\.0\.1:\d+/m, 'the api role runs')

    const answer = await udpAsk(ports.dns!, query('example.org', 'A'), '127.0.0.1', 5000)
    t.assert.ok(answer.length > 12, 'DNS answers')
    const api = `http://127.0.0.1:${ports.api}`
    const put = await fetch(`${api}/users/alice`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filter: [30] })
    })
    t.assert.strictEqual(put.status, 200, await put.text())
    const today = new Date().toISOString().slice(0, 10)
    const report = await fetch(`${api}/users/alice/stat/activity/day?from=${today}&to=${today}`)
    const body = (await report.json()) as { error?: { code?: string; message?: string } }
    t.assert.strictEqual(report.status, 503, JSON.stringify(body))
    t.assert.strictEqual(body.error?.code, 'API_STATS_UNAVAILABLE')
    t.assert.match(body.error?.message ?? '', /not a valid DuckDB database file/)
    const status = await runCli(['status', '--config', config])
    t.assert.match(status.stdout, /^ +degraded: stats-store: the statistics store \S+stats\.duckdb is unavailable/m)
    t.assert.strictEqual(child.exitCode, null)
    child.kill('SIGTERM')
    const [code] = (await once(child, 'exit')) as [number | null]
    t.assert.strictEqual(code, 0)
  }
)
