/**
 * The api role's memory under steady load: `filterd all` on the demo config (its own folder, free
 * ports), dnsperf sending RATE q/s of 20,000 names from 127.0.0.1 (the user `bench`), the console's
 * pages open: the live log (`GET /live/queries`, unfiltered) read as it streams, the user's five reports
 * (as ui/src/pages/user-reports.ts asks them, today's range) and, unless OVERVIEW=0, `GET /stats/overview`
 * polled every second (a poll still running skips the next). Every SAMPLE seconds one line: the api
 * role's RSS and anonymous RSS (/proc/PID/smaps_rollup), its V8 heap and external memory (reported by
 * ./api-memory-probe.ts, loaded into every role, which writes only in the api role), the dns role's RSS,
 * and the polls and live rows since the line before. At the end, the last 2/3 of the samples' spread.
 *
 *   node dist/bench/stats/api-memory.js [DURATION_S=600] [SAMPLE_S=60] [RATE=5000]
 * Environment: OVERVIEW=0 leaves the overview out; TAGS=1 adds a line of duckdb_memory() by tag (MiB); DUCKDB_MEMORY sets stats.duckdb-memory; KEEP=1 keeps
 * the folder.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { demoConfig, demoPorts } from '../../engine/testing/demo-config.js'
import { FILTERD } from '../../engine/testing/daemon.js'
import { makeTempDir } from '../../engine/testing/temp.js'
import { fetchJson, until } from '../../engine/testing/wait.js'

const DURATION_S = Number(process.argv[2] ?? 600)
const SAMPLE_S = Number(process.argv[3] ?? 60)
const RATE = Number(process.argv[4] ?? 5000)
const NAMES = 20_000
const PROBE = fileURLToPath(new URL('./api-memory-probe.js', import.meta.url))
const MiB = 1024 * 1024

const { dir, cleanup } = makeTempDir('filterd-api-memory-')
const ports = await demoPorts()
const config = join(dir, 'demo.yaml')
let text = demoConfig(dir, ports)
if (process.env.DUCKDB_MEMORY !== undefined)
  text = text.replace(/^stats:\n/m, `stats:\n  duckdb-memory: ${process.env.DUCKDB_MEMORY}\n`)
writeFileSync(config, text)
// A spread of names like an ISP's: 500 sites, a few dozen hosts each; a name in fifty a blocked one.
writeFileSync(
  join(dir, 'queries.txt'),
  Array.from({ length: NAMES }, (_, i) =>
    i % 50 === 0 ? `b${i}.casino.example A` : `h${i}.site${i % 500}.example A`
  ).join('\n') + '\n'
)

const children: ChildProcess[] = []
const stopAll = (): void => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
}
process.on('exit', () => {
  stopAll()
  if (process.env.KEEP === '1') console.error(`kept ${dir}`)
  else cleanup()
})
process.on('SIGINT', () => process.exit(130))

const all = spawn(process.execPath, [FILTERD, 'all', '--config', config], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, NODE_OPTIONS: `--import=${PROBE}`, FILTERD_MEMORY_PROBE: join(dir, 'api-memory.json') }
})
children.push(all)
let printed = ''
all.stdout.setEncoding('utf8').on('data', (d: string) => {
  if (!printed.includes('Stop with Ctrl-C.')) printed += d
})
all.stderr.resume()
await until('filterd all running', () => printed.includes('Stop with Ctrl-C.') || all.exitCode !== null, 300_000, 200)
if (all.exitCode !== null) throw new Error(`filterd all exited:\n${printed}`)
const api = `http://127.0.0.1:${ports.api}`
const put = await fetchJson(`${api}/users/bench`, 'PUT', { ip: ['127.0.0.1'], filter: [30] })
if (put.status !== 200) throw new Error(`PUT /users/bench: ${put.status} ${JSON.stringify(put.body)}`)

const pidOf = (role: string): number => Number(readFileSync(join(dir, 'run', `${role}.pid`), 'utf8').trim())
/** kB fields of /proc/PID/smaps_rollup (Rss, Anonymous) in MiB. */
function rollup(pid: number): { rss: number; anon: number } {
  const s = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN)
  return { rss: kb('Rss') / 1024, anon: kb('Anonymous') / 1024 }
}

const dnsperf = spawn(
  'dnsperf',
  [
    '-s',
    '127.0.0.1',
    '-p',
    String(ports.dns),
    '-d',
    join(dir, 'queries.txt'),
    '-Q',
    String(RATE),
    '-l',
    String(DURATION_S),
    '-c',
    '4',
    '-q',
    '200',
    '-t',
    '2'
  ],
  { stdio: ['ignore', 'pipe', 'ignore'] }
)
children.push(dnsperf)
let dnsperfOut = ''
dnsperf.stdout.setEncoding('utf8').on('data', (d: string) => {
  dnsperfOut += d
})

// The live log, as the console's #/live page reads it.
let liveRows = 0
let liveDropped = 0
const live = new AbortController()
const following = (async () => {
  for (;;) {
    try {
      const res = await fetch(`${api}/live/queries?last=100`, { signal: live.signal })
      if (res.body === null) throw new Error(`GET /live/queries: ${res.status}`)
      const decoder = new TextDecoder()
      let pending = ''
      for await (const chunk of res.body) {
        pending += decoder.decode(chunk as Uint8Array, { stream: true })
        for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
          const line = pending.slice(0, nl)
          pending = pending.slice(nl + 1)
          if (line.startsWith('data: {"time"')) liveRows++
          else if (line.startsWith('data: {"rows"')) liveDropped += Number(/(\d+)/.exec(line)?.[1] ?? 0)
        }
      }
    } catch {
      if (live.signal.aborted) return
    }
    await new Promise((r) => setTimeout(r, 1000)) // the stream ended: reconnect, as EventSource does
  }
})()

// The user's reports and the overview, every second.
let polls = 0
let skipped = 0
let failed = 0
let polling = false
const today = (): string => new Date().toISOString().slice(0, 10)
const poller = setInterval(() => {
  if (polling) {
    skipped++
    return
  }
  polling = true
  const q = `?from=${today()}&to=${today()}`
  const base = `${api}/users/bench/stat`
  const urls = [
    `${base}/activity/hour${q}`,
    `${base}/activity/day${q}`,
    `${base}/domains/all${q}`,
    `${base}/detail${q}`,
    `${base}/raw`,
    ...(process.env.OVERVIEW === '0' ? [] : [`${api}/stats/overview${q}`])
  ]
  void Promise.all(
    urls.map(async (u) => {
      const res = await fetch(u, { signal: AbortSignal.timeout(30_000) }).catch(() => undefined)
      if (res === undefined || res.status !== 200) failed++
      await res?.arrayBuffer()
    })
  ).finally(() => {
    polls++
    polling = false
  })
}, 1000)

interface Probe {
  rss: number
  heapUsed: number
  heapTotal: number
  external: number
  arrayBuffers: number
  /** The RSS before a full collection (FILTERD_MEMORY_PROBE_GC=1). */
  rssBeforeGc?: number
  /** duckdb_memory() by tag, bytes. */
  duckdb?: Record<string, number>
}
const samples: Array<{ minute: number; rss: number; anon: number; heap: number; external: number; dns: number }> = []
const duckdbOf = (p: Probe | undefined): number => Object.values(p?.duckdb ?? {}).reduce((a, b) => a + b, 0) / MiB
console.log(
  `api role memory, ${RATE} q/s, live log followed, reports${process.env.OVERVIEW === '0' ? '' : ' and overview'} polled every second (MiB)`
)
console.log(
  't(s)  api-rss  api-anon  heap-used  heap-total  external  duckdb  dns-rss  polls  skipped  failed  live-rows  dropped'
)
const began = Date.now()
let lastPolls = 0
let lastRows = 0
for (let t = SAMPLE_S; t <= DURATION_S; t += SAMPLE_S) {
  await new Promise((r) => setTimeout(r, began + t * 1000 - Date.now()))
  const apiMem = rollup(pidOf('api'))
  const dnsMem = rollup(pidOf('dns'))
  const probeFile = join(dir, 'api-memory.json')
  const p = existsSync(probeFile) ? (JSON.parse(readFileSync(probeFile, 'utf8')) as Probe) : undefined
  const s = {
    minute: t,
    rss: apiMem.rss,
    anon: apiMem.anon,
    heap: (p?.heapUsed ?? NaN) / MiB,
    external: (p?.external ?? NaN) / MiB,
    dns: dnsMem.rss
  }
  samples.push(s)
  const f = (n: number, w: number): string => n.toFixed(0).padStart(w)
  console.log(
    `${f(t, 4)}  ${f(s.rss, 7)}  ${f(s.anon, 8)}  ${f(s.heap, 9)}  ${f((p?.heapTotal ?? NaN) / MiB, 10)}  ${f(s.external, 8)}  ${f(duckdbOf(p), 6)}  ${f(s.dns, 7)}  ${f(polls - lastPolls, 5)}  ${f(skipped, 7)}  ${f(failed, 6)}  ${f(liveRows - lastRows, 9)}  ${f(liveDropped, 7)}`
  )
  if (process.env.FILTERD_MEMORY_PROBE_GC === '1')
    console.log(
      `      the api role's RSS before a full collection ${f((p?.rssBeforeGc ?? NaN) / MiB, 4)}, after ${f((p?.rss ?? NaN) / MiB, 4)}`
    )
  if (process.env.TAGS === '1')
    console.log(
      `      duckdb: ${JSON.stringify(Object.fromEntries(Object.entries(p?.duckdb ?? {}).map(([k, v]) => [k, Math.round(v / MiB)])))}`
    )
  lastPolls = polls
  lastRows = liveRows
}
clearInterval(poller)
live.abort()
await following
const tail = samples.slice(Math.floor(samples.length / 3))
const rss = tail.map((s) => s.rss)
const lo = Math.min(...rss)
const hi = Math.max(...rss)
console.log(
  `last ${tail.length} samples: api RSS ${lo.toFixed(0)}-${hi.toFixed(0)} MiB, spread ${(((hi - lo) / lo) * 100).toFixed(1)}% of the lowest`
)
await until('dnsperf done', () => dnsperf.exitCode !== null, 60_000, 200)
const sent = /Queries sent:\s+(\d+)/.exec(dnsperfOut)?.[1]
const lost = /Queries lost:\s+(\d+)/.exec(dnsperfOut)?.[1]
const qps = /Queries per second:\s+([\d.]+)/.exec(dnsperfOut)?.[1]
console.log(`dnsperf: ${sent ?? '?'} sent, ${lost ?? '?'} lost, ${qps ?? '?'} q/s`)
process.exit(0)
