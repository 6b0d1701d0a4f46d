/**
 * Without a shared store (`common.redis-ip` and `common.redis-sentinels` unset) filterd is one host
 * as before shared stores existed: no process loads the Redis client (ioredis) or the replica code
 * (engine/replica/), and none opens a connection to Redis. `filterd all` runs on the shipped demo
 * config under `node --import` of a small hook (inherited by every role's child through
 * `process.execArgv`) that records each module specifier an ESM `import` resolves (a loader hook) and,
 * at exit, every CommonJS module in the require cache; the test also looks at each process's TCP
 * sockets for one to the Redis port while the roles run and serve an API write.
 */
import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { demoConfig, demoPorts } from '../../engine/testing/demo-config.js'
import { FILTERD } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'

const LOADER = `import { appendFileSync } from 'node:fs'
const log = process.env.FILTERD_TEST_MODULE_LOG
export async function resolve (specifier, context, next) {
  const r = await next(specifier, context)
  appendFileSync(log, process.pid + ' esm ' + specifier + ' ' + r.url + '\\n')
  return r
}
`
const HOOK = `import { register, createRequire } from 'node:module'
import { appendFileSync } from 'node:fs'
register('./loader.mjs', import.meta.url)
const log = process.env.FILTERD_TEST_MODULE_LOG
const require = createRequire(import.meta.url)
process.on('exit', () => {
  appendFileSync(log, Object.keys(require.cache).map((k) => process.pid + ' cjs ' + k + '\\n').join('') + process.pid + ' exit\\n')
})
`

/** Socket inodes of `pid` that are TCP connections to `port` (any address, IPv4 or IPv6). */
function connectionsTo(pid: number, port: number): string[] {
  const inodes = new Set<string>()
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
        if (m !== null) inodes.add(m[1]!)
      } catch {
        /* closed meanwhile */
      }
    }
  } catch {
    return []
  } // the process is gone
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  const found: string[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length > 9 && f[2]!.endsWith(`:${hexPort}`) && inodes.has(f[9]!)) found.push(`${table} ${line.trim()}`)
    }
  }
  return found
}

test(
  'with no Redis configured, filterd all never loads ioredis or the replica code, and connects to no Redis',
  { skip: process.platform === 'linux' ? false : 'reads /proc' },
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-no-redis-')
    writeFileSync(join(dir, 'loader.mjs'), LOADER)
    writeFileSync(join(dir, 'hook.mjs'), HOOK)
    const moduleLog = join(dir, 'modules.log')
    writeFileSync(moduleLog, '')
    const ports = await demoPorts()
    const config = join(dir, 'demo.yaml')
    writeFileSync(config, demoConfig(dir, ports))
    t.assert.doesNotMatch(readFileSync(config, 'utf8'), /^\s*redis-(ip|sentinels):/m, 'the demo config names no Redis')

    const child = spawn(process.execPath, ['--import', join(dir, 'hook.mjs'), FILTERD, 'all', '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FILTERD_TEST_MODULE_LOG: moduleLog }
    })
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    while (!out.includes('Stop with Ctrl-C.')) {
      if (child.exitCode !== null) throw new Error(`filterd all exited early:\n${out}`)
      await once(child.stdout, 'data')
    }
    t.assert.doesNotMatch(out, /^ {2}sync /m, 'no sync role without Redis')

    // An API write and read, as an operator's first steps: the write path must not reach for Redis.
    const put = await fetch(`http://127.0.0.1:${ports.api!}/users/noredis`, {
      method: 'PUT',
      body: JSON.stringify({ ip: ['10.99.0.1'] }),
      headers: { 'content-type': 'application/json' }
    })
    t.assert.strictEqual(put.status, 200, await put.text())
    t.assert.strictEqual((await fetch(`http://127.0.0.1:${ports.api!}/users/noredis`)).status, 200)

    const pids = (): number[] => [
      ...new Set(
        readFileSync(moduleLog, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => Number(l.split(' ')[0]))
      )
    ]
    // Every role's process while it runs: no TCP connection to Redis's port (6379, the default).
    const running = pids()
    t.assert.ok(running.length >= 7, `the hook runs in filterd all and each role's child (${running.length} processes)`)
    for (const pid of running)
      t.assert.deepStrictEqual(connectionsTo(pid, 6379), [], `process ${pid} has no connection to Redis`)

    child.kill('SIGTERM')
    await once(child, 'exit')
    const lines = readFileSync(moduleLog, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
    const exited = lines.filter((l) => l.endsWith(' exit')).length
    t.assert.ok(exited >= 7, `every process dumped its CommonJS modules at exit (${exited})`)
    t.assert.ok(
      lines.some((l) => l.includes('/dist/api/role.js')),
      'the loader hook saw the api role load'
    )
    t.assert.ok(
      lines.some((l) => l.includes('/dist/dns/role.js')),
      'the loader hook saw the dns role load'
    )
    t.assert.ok(
      lines.some((l) => / cjs .*node_modules\//.test(l)),
      'the require cache lists CommonJS packages (the dump works)'
    )
    t.diagnostic(
      `${running.length} processes, ${lines.filter((l) => l.includes(' esm ')).length} ESM resolutions, ${lines.filter((l) => l.includes(' cjs ')).length} CommonJS modules recorded`
    )
    const offending = lines.filter((l) => /ioredis|\/dist\/engine\/replica\/|\/dist\/sync\//.test(l))
    t.assert.deepStrictEqual(offending, [], 'no process loaded ioredis, the replica code or the sync role')
  }
)
