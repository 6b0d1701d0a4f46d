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
 *   node dist/bench/blockpage/blockpage.bench.js [seconds per subject, default 5]
 */
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { get, makeStore, PAGE_ACCEPT } from '../../blockpage/testing/fixture.js'

const CONNECTIONS = 32
const FILTERD = fileURLToPath(new URL('../../tools/filterd.js', import.meta.url))

const SUBJECTS: ReadonlyArray<{ name: string, host: string, accept: string, status: number }> = [
  { name: 'page / category', host: 'casino.example', accept: PAGE_ACCEPT, status: 200 },
  { name: 'page / list', host: 'global-listed.example', accept: PAGE_ACCEPT, status: 200 },
  { name: 'page / unblocked', host: 'news.example', accept: PAGE_ACCEPT, status: 200 },
  { name: 'non-page / 403', host: 'casino.example', accept: 'image/avif,image/webp,*/*', status: 403 },
  { name: 'baseline / bad Host', host: 'bad_host!', accept: PAGE_ACCEPT, status: 400 }
]

function hasWrk (): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined
}

function runWrk (port: number, host: string, accept: string, seconds: number): { rps: number, latency: string } {
  const r = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-H', `Host: ${host}`, '-H', `Accept: ${accept}`, '-H', 'Accept-Language: ru-RU,ru;q=0.9', `http://127.0.0.1:${port}/`], { encoding: 'utf8' })
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout)
  if (rps === null) throw new Error(`wrk failed: ${r.stdout}${r.stderr}`)
  const p99 = /\s99%\s+(\S+)/.exec(r.stdout)
  return { rps: Number(rps[1]), latency: p99?.[1] ?? '?' }
}

/** Node fallback: counts complete responses by their status line on CONNECTIONS keep-alive sockets. */
async function runNode (port: number, host: string, accept: string, seconds: number): Promise<{ rps: number, latency: string }> {
  const request = Buffer.from(`GET / HTTP/1.1\r\nHost: ${host}\r\nAccept: ${accept}\r\nAccept-Language: ru-RU,ru;q=0.9\r\n\r\n`)
  let count = 0
  let running = true
  const sockets: Socket[] = []
  for (let i = 0; i < CONNECTIONS; i++) {
    const s = connect(port, '127.0.0.1')
    await once(s, 'connect')
    s.setNoDelay(true)
    let tail = ''
    s.on('data', (d: Buffer) => {
      const text = tail + d.toString('latin1')
      let n = 0
      for (let at = text.indexOf('HTTP/1.1 '); at !== -1; at = text.indexOf('HTTP/1.1 ', at + 9)) n++
      tail = text.slice(-8)
      count += n
      if (running) for (let k = 0; k < n; k++) s.write(request)
    })
    sockets.push(s)
  }
  for (const s of sockets) s.write(request)
  await new Promise(resolve => setTimeout(resolve, seconds * 1000))
  running = false
  for (const s of sockets) s.destroy()
  return { rps: count / seconds, latency: '-' }
}

async function main (): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5)
  const cleanups: Array<() => unknown> = []
  const { configFile } = await makeStore({ after: (fn) => { cleanups.unshift(fn) } })
  const child = spawn(process.execPath, [FILTERD, 'blockpage', '--config', configFile], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  try {
    const [ready] = await once(child, 'message') as [{ endpoints: string[] }]
    const port = Number(/:(\d+)$/.exec(ready.endpoints[0]!)![1])
    const wrk = hasWrk()
    const load0 = loadavg()[0]!
    const rows = []
    for (const s of SUBJECTS) {
      // Check the answer is the one we mean to measure before measuring it.
      const probe = await get(port, { host: s.host, accept: s.accept })
      if (probe.status !== s.status) throw new Error(`${s.name}: expected ${s.status}, got ${probe.status}`)
      const load = wrk ? async (d: number) => runWrk(port, s.host, s.accept, d) : async (d: number) => await runNode(port, s.host, s.accept, d)
      await load(1)                                 // warm-up: JIT, template paths, connections
      const r = await load(seconds)
      rows.push({ subject: s.name, 'req/s': Math.round(r.rps), 'p99 latency': r.latency })
    }
    console.log(`node ${process.version}, ${cpus()[0]?.model ?? '?'} x${cpus().length}, client ${wrk ? 'wrk -t1' : 'node'}, ${CONNECTIONS} keep-alive connections, ${seconds}s per subject, load average before ${load0.toFixed(1)}, after ${loadavg()[0]!.toFixed(1)}`)
    console.table(rows)
  } finally {
    child.kill('SIGTERM')
    await once(child, 'exit')
    for (const fn of cleanups) await fn()
  }
}

await main()
