// Preloaded into a server under test (`node --import ./dist/bench/dns/tls-first-second.js ...`, with
// TLS_TRACE_PORTS=853 the local ports of its TLS listeners): what the server's thread does in the
// second after a burst of new connections begins (a connection after 1 s without one starts a
// burst; dnsperf opens all its connections at its start). At the burst's end, one line on stderr:
// the connections accepted, each one's time from accept ('connection') to handshake done
// ('secureConnection') p50/max, the span from the first accept to the last handshake done, the
// thread's event-loop utilisation over the second, and a CPU profile of that second (V8's sampling
// profiler, 100 µs) summed: "(program)" is native work with no JavaScript on the stack (OpenSSL's
// handshakes and record crypto, libuv), then the garbage collector, then JavaScript by module, and
// the functions with the most time including their callees. A bench tool only: it patches
// node:net's Server.prototype.emit in the process it is loaded into. TLS_PROFILE=0: no profile (the
// profiler's own cost is out of the figures).
import { Server, type Socket } from 'node:net'
import { Session } from 'node:inspector'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import { readFileSync } from 'node:fs'

const PORTS = new Set((process.env['TLS_TRACE_PORTS'] ?? '').split(',').filter(Boolean).map(Number))
const BURST_MS = 1000
const PROFILE = process.env['TLS_PROFILE'] !== '0'
// The main thread's time on a core and waiting for one (ms), from /proc: a span's CPU cost apart
// from the time the thread was runnable but off its core (a loaded machine).
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`
function sched(): [number, number] {
  try {
    const [run, wait] = readFileSync(SCHEDSTAT, 'utf8').split(' ').map(Number) as [number, number]
    return [run / 1e6, wait / 1e6]
  } catch {
    return [NaN, NaN]
  }
}

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}
interface Burst {
  start: number
  accepted: Map<number, number>
  handshakes: number[]
  lastSecure: number
  elu: EventLoopUtilization
  sched0: [number, number]
  /** sched() when the last handshake so far was done. */
  schedSecure: [number, number]
}

const session = new Session()
session.connect()
let burst: Burst | null = null
let lastAccept = 0
let bursts = 0

function watched(server: Server): boolean {
  const a = server.address()
  return typeof a === 'object' && a !== null && PORTS.has(a.port)
}

function begin(now: number): void {
  const s0 = sched()
  burst = {
    start: now,
    accepted: new Map(),
    handshakes: [],
    lastSecure: now,
    elu: performance.eventLoopUtilization(),
    sched0: s0,
    schedSecure: s0
  }
  if (PROFILE) {
    session.post('Profiler.enable')
    session.post('Profiler.setSamplingInterval', { interval: 100 })
    session.post('Profiler.start')
  }
  setTimeout(end, BURST_MS)
}

// Time (ms) per profile node: each sample's delta to the next one is the sampled node's.
function selfTimes(p: Profile): Map<number, number> {
  const self = new Map<number, number>()
  for (let i = 0; i < p.samples.length - 1; i++) {
    const id = p.samples[i]!
    self.set(id, (self.get(id) ?? 0) + p.timeDeltas[i + 1]! / 1000)
  }
  return self
}

function moduleOf(n: ProfileNode): string {
  const { url, functionName } = n.callFrame
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, '').split('/')[0]!
  return url.includes('/dist/') ? 'filterd ' + url.slice(url.indexOf('/dist/') + 6) : 'other'
}

function summarise(p: Profile): string {
  const self = selfTimes(p)
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const byModule = new Map<string, number>()
  for (const [id, ms] of self) {
    const m = moduleOf(byId.get(id)!)
    byModule.set(m, (byModule.get(m) ?? 0) + ms)
  }
  // Inclusive time by function (name and file), each node counted once per stack.
  const inclusive = new Map<string, number>()
  const walk = (id: number, seen: Set<string>): number => {
    const n = byId.get(id)!
    let total = self.get(id) ?? 0
    const key = `${n.callFrame.functionName || '(anonymous)'}@${moduleOf(n)}`
    const fresh = !seen.has(key)
    if (fresh) seen.add(key)
    for (const c of n.children ?? []) total += walk(c, seen)
    if (fresh) {
      seen.delete(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + total)
    }
    return total
  }
  walk(p.nodes[0]!.id, new Set())
  const top = (m: Map<string, number>, k: number): string =>
    [...m]
      .filter(([name]) => !name.startsWith('(root)') && !name.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
      .join('; ')
  return `by module (ms): ${top(byModule, 12)} | inclusive (ms): ${top(inclusive, 14)}`
}

function end(): void {
  const b = burst!
  const elu = performance.eventLoopUtilization(b.elu)
  const s1 = sched()
  const ms = (a: number, z: number): string => (z - a).toFixed(1)
  const cpu =
    `main thread on a core / waiting for one (ms): until the last handshake ${ms(b.sched0[0], b.schedSecure[0])} / ` +
    `${ms(b.sched0[1], b.schedSecure[1])}, the whole second ${ms(b.sched0[0], s1[0])} / ${ms(b.sched0[1], s1[1])}`
  // The second after, for comparison (the same connections, open): one more line.
  const n = bursts + 1
  setTimeout(() => {
    const s2 = sched()
    process.stderr.write(
      `tls-first-second burst ${n} next second: main thread on a core / waiting for one (ms) ${ms(s1[0], s2[0])} / ${ms(s1[1], s2[1])}\n`
    )
  }, BURST_MS).unref()
  const report = (err: Error | null, res: object | undefined): void => {
    const hs = b.handshakes.sort((x, y) => x - y)
    const pct = (q: number): string =>
      hs.length === 0 ? '-' : hs[Math.min(hs.length - 1, Math.floor(q * hs.length))]!.toFixed(2)
    const prof = !PROFILE
      ? 'no profile'
      : err === null
        ? summarise((res as { profile: Profile }).profile)
        : `profile failed: ${String(err)}`
    process.stderr.write(
      `tls-first-second burst ${++bursts} t ${Date.now()} accepted ${b.accepted.size + hs.length} handshakes ${hs.length} ` +
        `accept->secure p50 ${pct(0.5)} max ${pct(1)} first accept->last secure ${(b.lastSecure - b.start).toFixed(2)} ms ` +
        `loop busy ${(elu.utilization * 100).toFixed(1)}% of ${BURST_MS} ms, ${cpu} | ${prof}\n`
    )
    burst = null
  }
  if (PROFILE) session.post('Profiler.stop', report)
  else report(null, undefined)
}

type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean
const emit = Server.prototype.emit as Emit
Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
  if ((event === 'connection' || event === 'secureConnection') && watched(this)) {
    const now = performance.now()
    const sock = args[0] as Socket
    if (event === 'connection') {
      if (burst === null && now - lastAccept > BURST_MS) begin(now)
      lastAccept = now
      burst?.accepted.set(sock.remotePort ?? 0, now)
    } else if (burst !== null) {
      const at = burst.accepted.get(sock.remotePort ?? 0)
      if (at !== undefined) {
        burst.accepted.delete(sock.remotePort ?? 0)
        burst.handshakes.push(now - at)
        burst.lastSecure = now
        burst.schedSecure = sched()
      }
    }
  }
  return emit.call(this, event, ...args)
} as Server['emit']
