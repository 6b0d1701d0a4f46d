import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { call, tempDir, writeTaxonomy } from './fixtures.js'

const CLI = fileURLToPath(new URL('../tools/filterd.js', import.meta.url))

test('filterd api serves the management API, writes its pid file, and removes it on SIGTERM', async (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-daemon-')
  t.after(cleanup)
  writeTaxonomy(join(dir, 'cats'))
  const pidFile = join(dir, 'run', 'api.pid')
  const file = join(dir, 'filterd.yaml')
  writeFileSync(file, [
    'datafiles:', `  cats: ${join(dir, 'cats')}`, '  language: en',
    'common:', `  db: ${join(dir, 'db')}`,
    'api:', '  listen: 127.0.0.1:0', '  log: "-"', `  pid: ${pidFile}`
  ].join('\n'))
  const child = spawn(process.execPath, [CLI, 'api', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  // The role logs one JSON line "api started" with its endpoints once it listens; port 0 is resolved there.
  let port = 0
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string, endpoints?: string[] }
    if (entry.msg === 'api started') {
      port = Number(/:(\d+)/.exec(entry.endpoints?.[0] ?? '')?.[1])
      break
    }
  }
  child.stdout.resume()
  t.assert.ok(port > 0)
  t.assert.strictEqual(readFileSync(pidFile, 'utf8').trim(), String(child.pid))
  const base = `http://127.0.0.1:${port}`
  t.assert.strictEqual((await call(base, 'PUT', '/users/daemon', { ip: ['10.0.0.1'], filter: [40] })).status, 200)
  t.assert.deepStrictEqual((await call(base, 'GET', '/users/daemon/filter/')).body, [40])
  child.kill('SIGTERM')
  const [code] = await exited as [number | null]
  t.assert.strictEqual(code, 0)
  t.assert.strictEqual(existsSync(pidFile), false)
})
