// A config reload of the DNS role (SIGHUP, tools/cli/run-role.ts): a changed forwarder is applied live
// in every front process, with one log line; a restart key is named and kept; a config that does
// not load is refused, naming the key, and the role keeps serving on the old one. The role logs to
// `-`, which before had no SIGHUP handler at all (the signal killed it).
import { test, type TestContext } from 'node:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { startRole, type LogLine } from '../engine/testing/daemon.js'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { releasedPort } from '../engine/testing/ports.js'
import { ask, firstA, world, writeConfigFile } from './testing/harness.js'

const A = '198.51.100.10'
const B = '198.51.100.20'

for (const processes of [1, 2]) {
  test(
    `proxy.processes ${processes}: SIGHUP applies a new forwarder live, names a restart key, refuses a bad config`,
    { timeout: 90_000 },
    async (t: TestContext) => {
      const w = await world(t)
      const other = await startStubResolver({ tcp: true, a: B })
      t.after(async () => {
        await other.close()
      })
      const port = await releasedPort()
      const options = { listen: [`127.0.0.1:${port}`], proxy: { processes, 'log-level': 'info' } }
      const file = writeConfigFile(w, options)
      const role = await startRole(t, 'dns', file)
      t.assert.strictEqual(firstA(await ask(port, 'one.example', 'A')), A)

      const reloaded = (l: LogLine): boolean => typeof l.msg === 'string' && l.msg.startsWith('dns: config reloaded')
      writeConfigFile(w, { ...options, forward: [`127.0.0.1:${other.port}`] })
      role.proc.kill('SIGHUP')
      const line = await role.waitForLog(reloaded)
      t.assert.strictEqual(line.msg, 'dns: config reloaded: applied dnscache.forward')
      t.assert.deepStrictEqual(line.applied, ['dnscache.forward'])
      // Applied in every front process before the line was written: each of several queries goes to the new forwarder.
      for (let i = 0; i < 8; i++) t.assert.strictEqual(firstA(await ask(port, `two-${i}.example`, 'A')), B)
      t.assert.strictEqual(role.logs.filter(reloaded).length, 1, 'one line per reload')

      // A new listen address needs a restart: named, and the role keeps the old one; the forwarder moves back live.
      const elsewhere = await releasedPort()
      writeConfigFile(w, { ...options, listen: [`127.0.0.1:${elsewhere}`] })
      role.proc.kill('SIGHUP')
      await role.waitForLog((l) => reloaded(l) && l !== line)
      const second = role.logs.filter(reloaded)[1]!
      t.assert.strictEqual(
        second.msg,
        'dns: config reloaded: applied dnscache.forward; needs a restart of the dns role, still running on the old value: proxy.listen'
      )
      t.assert.strictEqual(second.level, 40)
      t.assert.strictEqual(firstA(await ask(port, 'three.example', 'A')), A)

      // A config that does not load: refused, naming the key; the running config stays (forwarder A, old port).
      const doc = JSON.parse(readFileSync(file, 'utf8')) as {
        proxy: Record<string, unknown>
        dnscache: Record<string, unknown>
      }
      doc.proxy.ttl = 'an hour'
      doc.dnscache.forward = [`127.0.0.1:${other.port}`]
      writeFileSync(file, JSON.stringify(doc))
      role.proc.kill('SIGHUP')
      const refused = await role.waitForLog(
        (l) => typeof l.msg === 'string' && l.msg.startsWith('dns: config reload refused')
      )
      t.assert.match(refused.msg!, /proxy\.ttl: must be integer/)
      t.assert.strictEqual(refused.level, 50)
      t.assert.strictEqual(firstA(await ask(port, 'four.example', 'A')), A)
      t.assert.strictEqual(role.proc.exitCode, null)
      t.assert.strictEqual(role.proc.signalCode, null)
    }
  )
}
