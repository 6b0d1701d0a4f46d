/**
 * Block page answers per second against the real daemon (`filterd blockpage`, a child process, so the load
 * generator does not share its event loop), over keep-alive HTTP/1.1 from 127.0.0.1 (an anonymous client whose
 * server defaults block Gambling). wrk drives the load when it is installed; otherwise a Node client keeps
 * CONNECTIONS keep-alive sockets with one request in flight each (slower: it then measures itself too).
 *
 * Subjects, each a kind of traffic the block page sees:
 *   page / category     a browser opening a category-blocked site: verdict + blocked_by_category render
 *   page / list         a globally blacklisted site: verdict + blocked render
 *   page / unblocked    a stale DNS answer: verdict + unblocked render
 *   non-page / 403      an <img>/script/XHR of a blocked site: verdict + 8-byte text answer
 *   baseline / bad Host a Host that is not a name: 400 without the policy or a template (adapter cost only)
 *
 *   node dist/bench/blockpage/blockpage.bench.js [seconds per subject, default 5] [common.http-server values, default auto]
 *   node dist/bench/blockpage/blockpage.bench.js 5 auto,uws    # the default (node:http) and uWS, one after the other
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { get, makeStore, PAGE_ACCEPT } from '../../blockpage/testing/fixture.js'
import { hasWrk, keepAliveLoad, runWrk, type LoadResult } from '../common/load.js'

const CONNECTIONS = 32
const FILTERD = fileURLToPath(new URL('../../tools/filterd.js', import.meta.url))

const SUBJECTS: ReadonlyArray<{ name: string; host: string; accept: string; status: number }> = [
  { name: 'page / category', host: 'casino.example', accept: PAGE_ACCEPT, status: 200 },
  { name: 'page / list', host: 'global-listed.example', accept: PAGE_ACCEPT, status: 200 },
  { name: 'page / unblocked', host: 'news.example', accept: PAGE_ACCEPT, status: 200 },
  { name: 'non-page / 403', host: 'casino.example', accept: 'image/avif,image/webp,*/*', status: 403 },
  { name: 'baseline / bad Host', host: 'bad_host!', accept: PAGE_ACCEPT, status: 400 }
]

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5)
  // common.http-server values to measure, one daemon each, in this order (the same client and machine load,
  // so their ratio holds even where the absolute numbers do not).
  const impls = (process.argv[3] ?? 'auto').split(',')
  const cleanups: Array<() => unknown> = []
  const { configFile } = await makeStore({
    after: (fn) => {
      cleanups.unshift(fn)
    }
  })
  const base = readFileSync(configFile, 'utf8')
  const wrk = hasWrk()
  const load0 = loadavg()[0]!
  const tables: Array<[string, unknown[]]> = []
  try {
    for (const impl of impls) {
      writeFileSync(configFile, base.replace('common:\n', `common:\n  http-server: ${impl}\n`))
      tables.push([impl, await measure(configFile, seconds, wrk)])
    }
    console.log(
      `node ${process.version}, ${cpus()[0]?.model ?? '?'} x${cpus().length}, client ${wrk ? 'wrk -t1' : 'node'}, ${CONNECTIONS} keep-alive connections, ${seconds}s per subject, load average before ${load0.toFixed(1)}, after ${loadavg()[0]!.toFixed(1)}`
    )
    for (const [impl, rows] of tables) {
      console.log(`common.http-server: ${impl}`)
      console.table(rows)
    }
  } finally {
    for (const fn of cleanups) await fn()
  }
}

/** Starts `filterd blockpage` on the config and measures every subject against it. */
async function measure(configFile: string, seconds: number, wrk: boolean): Promise<unknown[]> {
  const child = spawn(process.execPath, [FILTERD, 'blockpage', '--config', configFile], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc']
  })
  try {
    const [ready] = (await once(child, 'message')) as [{ endpoints: string[] }]
    const port = Number(/:(\d+)(?: |$)/.exec(ready.endpoints[0]!)![1])
    const rows = []
    for (const s of SUBJECTS) {
      // Check the answer is the one we mean to measure before measuring it.
      const probe = await get(port, { host: s.host, accept: s.accept })
      if (probe.status !== s.status) throw new Error(`${s.name}: expected ${s.status}, got ${probe.status}`)
      const headers = { Host: s.host, Accept: s.accept, 'Accept-Language': 'ru-RU,ru;q=0.9' }
      const request = Buffer.from(
        `GET / HTTP/1.1\r\n${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n`
      )
      const load = async (d: number): Promise<LoadResult> =>
        wrk
          ? runWrk({ url: `http://127.0.0.1:${port}/`, seconds: d, connections: CONNECTIONS, headers })
          : await keepAliveLoad({ port, seconds: d, connections: CONNECTIONS, request: () => request })
      await load(1) // warm-up: JIT, template paths, connections
      const r = await load(seconds)
      rows.push({ subject: s.name, 'req/s': Math.round(r.rps), 'p99 latency': r.p99 })
    }
    return rows
  } finally {
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
}

await main()
