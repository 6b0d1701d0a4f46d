import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { ALICE, get, makeStore, visibleText } from './testing/fixture.js'

const FILTERD = fileURLToPath(new URL('../tools/filterd.js', import.meta.url))

test('the filterd blockpage daemon serves pages, proxies the API host and follows policy written by another process', async (t: TestContext) => {
  // A stand-in for the API daemon behind the real front door.
  const api = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json')
    res.end(JSON.stringify({ api: true, path: req.url, host: req.headers.host }))
  })
  api.listen(0, '127.0.0.1')
  await once(api, 'listening')
  t.after(() => {
    api.close()
  })
  const apiPort = (api.address() as AddressInfo).port
  const { store, configFile, config } = await makeStore(t, { apiListen: `127.0.0.1:${apiPort}` })

  const child = spawn(process.execPath, [FILTERD, 'blockpage', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const ready = await Promise.race([
    once(child, 'message') as Promise<[{ type: string; endpoints: string[] }]>,
    once(child, 'exit').then(([code]) => {
      throw new Error(`filterd exited with ${String(code)}: ${stderr}`)
    })
  ])
  const endpoint = ready[0].endpoints.find((e) => e.startsWith('blockpage http '))
  t.assert.ok(endpoint, JSON.stringify(ready[0]))
  const port = Number(/:(\d+)$/.exec(endpoint)![1])
  t.assert.ok(existsSync(config.blockpage.pid))

  const page = await get(port, { host: 'casino.example' })
  t.assert.strictEqual(page.status, 200)
  t.assert.match(visibleText(page.body), /casino\.example .*Азартные игры/)

  const proxied = await get(port, { host: 'api.test', path: '/users/', accept: 'application/json' })
  t.assert.strictEqual(proxied.status, 200)
  t.assert.strictEqual(JSON.parse(proxied.body).path, '/users/')

  const before = await get(port, { host: 'news.example', from: ALICE, acceptLanguage: 'en' })
  t.assert.match(visibleText(before.body), /no longer blocked/)
  await store.write((w) => {
    w.putList('alice', 'black', ['news.example'])
  })
  const after = await get(port, { host: 'news.example', from: ALICE, acceptLanguage: 'en' })
  t.assert.match(visibleText(after.body), /block list of your account/)

  child.kill('SIGTERM')
  const [code] = (await once(child, 'exit')) as [number | null]
  t.assert.strictEqual(code, 0, stderr)
  t.assert.strictEqual(existsSync(config.blockpage.pid), false)
})
