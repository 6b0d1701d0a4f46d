/**
 * A non-DNS role in a crash loop never takes DNS with it: `filterd all` on the demo config, its api
 * role killed with SIGKILL ten times in a row, each kill as soon as the role it started again answers
 * /health, while a DNS query goes out every 50 ms. Every query is answered, the api role comes back
 * and serves, and `filterd status` says how many times it was restarted.
 *
 * The restart backoff's cap is lowered to 1 s (the failpoint `roles.restart.max-backoff-ms`): with its 30 s cap,
 * the first nine restarts alone wait 81 s, and ten kills could not fit in a minute. The schedule up
 * to the cap is the real one (tools/cli/supervisor.test.ts follows it to 12.8 s).
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { query, udpAsk } from '../../engine/testing/dns.js'
import { demoConfig, demoPorts, startDemo } from '../../engine/testing/demo-config.js'
import { runCli } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'
import { fetchJson, until } from '../../engine/testing/wait.js'
import { livePid } from './run-role.js'
import { failpointEnv } from '../../engine/failpoints.js'

const KILLS = 10
const QUERY_EVERY_MS = 50
/** A stub resolver's usual timeout: an answer later than this is a query the client gave up on. */
const ANSWER_WITHIN_MS = 5000

/** DNS queries every QUERY_EVERY_MS, each with its own socket and deadline, until `stop()`. */
function queryEvery(port: number): { stop: () => Promise<{ asked: number; unanswered: string[]; slowestMs: number }> } {
  let asked = 0
  let slowestMs = 0
  const unanswered: string[] = []
  const inFlight = new Set<Promise<void>>()
  const timer = setInterval(() => {
    const id = ++asked & 0xffff
    const sent = Date.now()
    const p = udpAsk(port, query('example.org', 'A', { id }), '127.0.0.1', ANSWER_WITHIN_MS).then(
      (answer) => {
        slowestMs = Math.max(slowestMs, Date.now() - sent)
        if (answer.readUInt16BE(0) !== id || answer.length <= 12) unanswered.push(`query ${id}: a wrong answer`)
      },
      (err: Error) => {
        unanswered.push(`query ${id} at ${new Date(sent).toISOString()}: ${err.message}`)
      }
    )
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p))
  }, QUERY_EVERY_MS)
  return {
    stop: async () => {
      clearInterval(timer)
      await Promise.all(inFlight)
      return { asked, unanswered, slowestMs }
    }
  }
}

test(
  'filterd all: the api role killed ten times in a row comes back each time, DNS answers every query throughout, and status shows the restarts',
  { timeout: 420_000 },
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-api-kills-')
    const ports = await demoPorts()
    const config = join(dir, 'demo.yaml')
    writeFileSync(config, demoConfig(dir, ports))
    const demo = await startDemo(t, config, failpointEnv({ 'roles.restart.max-backoff-ms': '1000' }))
    const pidFile = join(dir, 'run', 'api.pid')
    const health = `http://127.0.0.1:${ports.api}/health`
    // Started again: a new process in the pid file, listening (the killed one held the port until it died).
    const apiBack = async (killed: number | undefined): Promise<number> => {
      let pid: number | undefined
      await until(
        'the api role running and answering /health',
        async () => {
          if (demo.child.exitCode !== null) return true
          pid = livePid(pidFile, 'api')
          return pid !== undefined && pid !== killed && (await fetchJson(health)).status === 200
        },
        120_000,
        50
      )
      t.assert.strictEqual(demo.child.exitCode, null, `filterd all still runs:\n${demo.output()}`)
      return pid!
    }

    const dns = queryEvery(ports.dns!)
    const began = Date.now()
    let pid = await apiBack(undefined)
    for (let kill = 0; kill < KILLS; kill++) {
      process.kill(pid, 'SIGKILL')
      pid = await apiBack(pid)
    }
    const killsMs = Date.now() - began
    const { asked, unanswered, slowestMs } = await dns.stop()
    t.diagnostic(
      `${KILLS} kills and restarts in ${killsMs} ms; ${asked} DNS queries, the slowest answered in ${slowestMs} ms`
    )
    t.assert.deepStrictEqual(unanswered, [], `${unanswered.length} of ${asked} DNS queries unanswered`)
    t.assert.ok(asked >= killsMs / QUERY_EVERY_MS / 2, `${asked} queries in ${killsMs} ms`)
    t.assert.match(
      demo.output(),
      /the api role exited \(SIGKILL\); starting it again in 1000 ms \(10 failures in a row/
    )
    t.assert.doesNotMatch(demo.output(), /stopping/)

    // It serves: a write and the read of it.
    const api = `http://127.0.0.1:${ports.api}`
    const put = await fetchJson(`${api}/users/alice`, 'PUT', { filter: [30] })
    t.assert.strictEqual(put.status, 200, JSON.stringify(put.body))
    const got = await fetchJson(`${api}/users/alice`)
    t.assert.strictEqual(got.status, 200, JSON.stringify(got.body))

    // Within a minute of its last start, status shows it running and what filterd all did to keep it so.
    const status = await runCli(['status', '--config', config])
    t.assert.match(status.stdout, /^dns +pid \d+ .*health ok/m)
    t.assert.match(status.stdout, new RegExp(`^api +pid ${pid} `, 'm'))
    t.assert.match(
      status.stdout,
      /^ +restarted by filterd all after 10 failures in a row, the last: SIGKILL at \d{4}-\d\d-\d\dT/m,
      status.stdout
    )
  }
)
