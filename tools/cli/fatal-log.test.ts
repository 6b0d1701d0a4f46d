// A fatal start error goes to the role's own log file as well as to standard error: the
// operator reads the file install.md points at, which stayed empty before.
import { test, type TestContext } from 'node:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { once } from 'node:events'
import { join } from 'node:path'
import { CONF, runCli, startFailureLine } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'

// A statistics store that cannot be opened no longer stops the api role (it serves without reports and
// reopens it by itself): a listener that cannot bind is what still ends its start.
test('an api role that cannot bind its listener writes the fatal error to its log file and to stderr', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-fatal-')
  const taken = createServer()
  taken.listen(0, '127.0.0.1')
  await once(taken, 'listening')
  t.after(() => taken.close())
  const port = (taken.address() as AddressInfo).port
  const log = join(dir, 'logs', 'api.log')
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    [
      'api:',
      `  listen: 127.0.0.1:${port}`,
      `  log: ${log}`,
      `  pid: ${join(dir, 'api.pid')}`,
      'common:',
      `  db: ${join(dir, 'db')}`,
      'datafiles:',
      `  cats: ${CONF}`,
      '  language: en',
      'stats:',
      `  db: ${join(dir, 'statsdb')}`,
      `  dir: ${join(dir, 'stats')}`,
      ''
    ].join('\n')
  )
  const r = await runCli(['api', '--config', file])
  t.assert.strictEqual(r.code, 1)
  const stderrLine = startFailureLine(r.stderr)
  t.assert.strictEqual(stderrLine.level, 60)
  const lines = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: number; msg: string; role: string })
  const fatal = lines.filter((l) => l.level === 60)
  t.assert.strictEqual(fatal.length, 1, readFileSync(log, 'utf8'))
  t.assert.strictEqual(fatal[0]!.msg, stderrLine.msg)
  t.assert.strictEqual(fatal[0]!.role, 'api')
  t.assert.match(fatal[0]!.msg, new RegExp(`127\\.0\\.0\\.1:${port}`))
})
