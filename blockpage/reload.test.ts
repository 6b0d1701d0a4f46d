// A config reload of the block page (SIGHUP): the front door's api.access rules apply live, with the
// one reload line in the role's log; the process keeps running.
import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { startRole } from '../engine/testing/daemon.js'
import { until } from '../engine/testing/wait.js'
import { get, makeStore } from './testing/fixture.js'

test('SIGHUP applies a changed api.access in the front door without a restart', async (t: TestContext) => {
  const api = createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json')
    res.end('{"api":true}')
  })
  api.listen(0, '127.0.0.1')
  await once(api, 'listening')
  t.after(() => {
    api.close()
  })
  const apiPort = (api.address() as AddressInfo).port
  const { dir, configFile } = await makeStore(t, { apiListen: `127.0.0.1:${apiPort}`, api: ['access: [deny all]'] })
  // Logs on: `silent` asks for no line at all, the reload line included.
  writeFileSync(configFile, readFileSync(configFile, 'utf8').replace('log-level: silent', 'log-level: warn'))
  const role = await startRole(t, 'blockpage', configFile)
  t.assert.strictEqual((await get(role.port, { host: 'api.test', path: '/users/' })).status, 403)

  writeFileSync(
    configFile,
    readFileSync(configFile, 'utf8').replace('access: [deny all]', 'access: [allow 127.0.0.0/8, deny all]')
  )
  role.proc.kill('SIGHUP')
  const log = join(dir, 'blockpage.log')
  await until('the reload line', () => readFileSync(log, 'utf8').includes('blockpage: config reloaded'), 20_000)
  const lines = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.includes('config reloaded'))
  t.assert.strictEqual(lines.length, 1)
  t.assert.match(lines[0]!, /"msg":"blockpage: config reloaded: applied api\.access"/)
  t.assert.strictEqual((await get(role.port, { host: 'api.test', path: '/users/' })).status, 200)
  t.assert.strictEqual(role.proc.exitCode, null)
})
