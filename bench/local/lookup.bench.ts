/**
 * Local categorization service throughput: `wrk` (keep-alive, 32 connections, 1 thread) against the
 * real `filterd local` role (child process, database loaded from a real `filterd collector`), and
 * against a uWebSockets.js hello-world in the same run as the ceiling of what one Node process
 * serves on this machine.
 *
 *   node dist/bench/local/lookup.bench.js [seconds per subject, default 5]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import type * as Uws from 'uWebSockets.js'
import type { TestContext } from 'node:test'
import { setup, startRole } from '../../local/testing/harness.js'
import { runWrk } from '../common/load.js'

async function serveHello(): Promise<void> {
  const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof Uws
  const app = uws.App().get('/*', (res) => {
    res.writeHeader('Content-Type', 'application/json').end('{"category":[1]}')
  })
  app.listen('127.0.0.1', 0, (ls) => {
    process.stdout.write(`${uws.us_socket_local_port(ls)}\n`)
  })
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve-hello')) {
    await serveHello()
    return
  }
  const seconds = Number(process.argv[2] ?? 5)
  const cleanups: Array<() => unknown> = []
  const t = {
    after: (fn: () => unknown) => {
      cleanups.push(fn)
    }
  } as unknown as TestContext
  try {
    const s = setup(t)
    const lines = ['news.example\t60', 'porn.example\t1']
    for (let i = 0; i < 100_000; i++) lines.push(`site-${i}.example\t${(i % 5) + 1}`)
    s.writeData(lines.join('\n') + '\n')
    const collector = await startRole(t, 'collector', s.collectorConfig())
    const local = await startRole(t, 'local', s.localConfig(collector.url))
    const hello = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve-hello'], {
      stdio: ['ignore', 'pipe', 'inherit']
    })
    cleanups.push(() => hello.kill())
    const [line] = (await once(hello.stdout, 'data')) as [Buffer]
    const helloPort = Number(line.toString().trim())
    const subjects: Array<[string, string]> = [
      ['uWS hello-world (ceiling)', `http://127.0.0.1:${helloPort}/x`],
      ['local: categorized subdomain (200)', `${local.url}/www.site-4242.example`],
      ['local: uncategorized name (404)', `${local.url}/nothing.invalid-name.example`],
      ['local: /stat/ (counters JSON)', `${local.url}/stat/`]
    ]
    const rows = []
    for (const [name, url] of subjects) {
      runWrk({ url, seconds: 1, connections: 32 }) // warm-up: JIT, connections
      const r = runWrk({ url, seconds, connections: 32 })
      rows.push({ subject: name, rps: Math.round(r.rps), p50: r.p50, p99: r.p99 })
    }
    const ceiling = rows[0]!.rps
    console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, wrk -t1 -c32 ${seconds}s`)
    console.table(rows.map((r) => ({ ...r, 'of ceiling': `${Math.round((100 * r.rps) / ceiling)}%` })))
  } finally {
    for (const fn of cleanups.reverse()) await fn()
  }
}

await main()
