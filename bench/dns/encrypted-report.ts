// The tables of bench/dns/encrypted.sh: reads its tagged JSON lines from stdin ("R" one server's
// round, "I" one server's idle-connection figures, "U" one UDP run with or without them) and prints
// medians over the rounds, with filterd's ratio to dnsdist.
// Usage: ... | node dist/bench/dns/encrypted-report.js RATE IDLE SECONDS
import { createInterface } from 'node:readline'

interface Latency {
  p50: number
  p99: number
  p999: number
  /** The p99 after the run's first second (dnsperf runs). */
  p99Steady: number
  /** The run's first second (dnsperf runs): its answers over the run's p99, of all those, its p99. */
  firstSecond?: { overP99: number; ofOverP99: number; p99: number; max: number }
}
interface Round {
  who: string
  load: string
  dotMax: { qps: number; samples: number; lost: number }
  dotCpu: number
  dotRate: Latency & { lost: number; samples: number }
  tcpMax: { qps: number; samples: number; lost: number }
  tcpCpu: number
  tcpRate: Latency & { lost: number; samples: number }
  dohMax: { rps: number; ok: number; failed: number }
  dohCpu: number
  dohRate: Latency & { requests: number; bad: number }
  full: { perSecond: number; resumed: number; failed: number }
  resume: { perSecond: number; resumed: number; failed: number }
}
interface Idle {
  who: string
  rssBefore: number
  rssWith: number
  opened: { open: number; failed: number; ms: number }
  end: { stillOpen: number }
}
interface Udp {
  with: boolean
  qps: number
}

const [rate, idle, secs] = process.argv.slice(2).map(Number) as [number, number, number]
const rounds: Round[] = []
const idles: Idle[] = []
const udp: Udp[] = []
for await (const line of createInterface({ input: process.stdin })) {
  const body = line.slice(2).trim()
  if (body === '') continue // a part not run (ROUNDS=0)
  if (line.startsWith('R ')) rounds.push(JSON.parse(body) as Round)
  else if (line.startsWith('I ')) idles.push(JSON.parse(body) as Idle)
  else if (line.startsWith('U ')) udp.push(JSON.parse(body) as Udp)
}

const med = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? NaN
}
const of = (who: string): Round[] => rounds.filter((r) => r.who === who)
const pick = (who: string, get: (r: Round) => number): number => med(of(who).map(get))
const each = (who: string, get: (r: Round) => number): string => of(who).map(get).join(' / ')
// Server CPU per query, µs: ticks are 1/100 s; the DoH run includes h2load's 1 s warm-up.
const dotCpu = (r: Round): number => (r.dotCpu * 10_000) / Math.max(1, r.dotMax.samples)
const tcpCpu = (r: Round): number => (r.tcpCpu * 10_000) / Math.max(1, r.tcpMax.samples)
const dohCpu = (r: Round): number => (r.dohCpu * 10_000) / Math.max(1, r.dohMax.ok + r.dohMax.rps)

const rows: Array<[string, (r: Round) => number, boolean]> = [
  ['DoT q/s, max (dnsperf -m dot -c 16 -q 200)', (r) => r.dotMax.qps, true],
  ['DoT server CPU µs/query at max', dotCpu, false],
  [`DoT p50 ms @${rate} q/s`, (r) => r.dotRate.p50, false],
  [`DoT p99 ms @${rate} q/s`, (r) => r.dotRate.p99, false],
  [`DoT p99 ms @${rate} q/s after its first second`, (r) => r.dotRate.p99Steady, false],
  [`DoT p99 ms @${rate} q/s in its first second`, (r) => r.dotRate.firstSecond!.p99, false],
  [
    `DoT answers over the p99 @${rate} q/s: share in the first second`,
    (r) => +(r.dotRate.firstSecond!.overP99 / r.dotRate.firstSecond!.ofOverP99).toFixed(2),
    false
  ],
  [`DoT p99.9 ms @${rate} q/s`, (r) => r.dotRate.p999, false],
  [`DoT lost @${rate} q/s`, (r) => r.dotRate.lost, false],
  ['TCP q/s, max (dnsperf -m tcp -c 16 -q 200)', (r) => r.tcpMax.qps, true],
  ['TCP server CPU µs/query at max', tcpCpu, false],
  [`TCP p50 ms @${rate} q/s`, (r) => r.tcpRate.p50, false],
  [`TCP p99 ms @${rate} q/s`, (r) => r.tcpRate.p99, false],
  [`TCP p99 ms @${rate} q/s after its first second`, (r) => r.tcpRate.p99Steady, false],
  [`TCP p99.9 ms @${rate} q/s`, (r) => r.tcpRate.p999, false],
  [`TCP lost @${rate} q/s`, (r) => r.tcpRate.lost, false],
  ['DoH POST req/s, max (h2load -c 16 -m 10)', (r) => r.dohMax.rps, true],
  ['DoH failed requests at max', (r) => r.dohMax.failed, false],
  ['DoH server CPU µs/request at max', dohCpu, false],
  [`DoH p50 ms @${rate} req/s`, (r) => r.dohRate.p50, false],
  [`DoH p99 ms @${rate} req/s`, (r) => r.dohRate.p99, false],
  [`DoH p99.9 ms @${rate} req/s`, (r) => r.dohRate.p999, false],
  [`DoH non-200 @${rate} req/s`, (r) => r.dohRate.bad, false],
  ['TLS 1.3 handshakes/s, full', (r) => r.full.perSecond, true],
  ['TLS 1.3 handshakes/s, resumed', (r) => r.resume.perSecond, true],
  ['share resumed when offered', (r) => r.resume.resumed, true]
]
console.log(
  `medians of ${of('filterd').length} rounds (${secs} s runs); load average (1 min) at each run: ${rounds.map((r) => r.load).join(' ')}`
)
// With BEFORE (a second filterd, e.g. main's build) or TERMINATOR (DoT through a worker thread's TLS,
// "worker"): each one's median, its ratio to filterd's (before: filterd's to it) and its rounds.
const extra = ['before', 'worker'].filter((w) => of(w).length > 0)
const ratioName = (w: string): string => (w === 'before' ? 'filterd / before' : `${w} / filterd`)
console.log(
  '| figure | dnsdist 1.7 | filterd | filterd / dnsdist |' +
    extra.map((w) => ` ${w} | ${ratioName(w)} |`).join('') +
    ' filterd, each round | dnsdist, each round |' +
    extra.map((w) => ` ${w}, each round |`).join('')
)
console.log(
  '|---|---:|---:|---:|' + extra.map(() => '---:|---:|').join('') + '---|---|' + extra.map(() => '---|').join('')
)
// A figure of a part not run (PARTS) is absent from every round: its row is left out.
const measured = (get: (r: Round) => number): boolean =>
  rounds.length > 0 &&
  rounds.every((r) => {
    try {
      return Number.isFinite(get(r))
    } catch {
      return false
    }
  })
for (const [name, get] of rows) {
  if (!measured(get)) continue
  const d = pick('dnsdist', get)
  const f = pick('filterd', get)
  const ratio = (x: number, y: number): string => (y === 0 ? '' : `${(x / y).toFixed(2)}x`)
  const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2))
  console.log(
    `| ${name} | ${fmt(d)} | ${fmt(f)} | ${ratio(f, d)} |` +
      extra
        .map((w) => {
          const x = pick(w, get)
          return ` ${fmt(x)} | ${w === 'before' ? ratio(f, x) : ratio(x, f)} |`
        })
        .join('') +
      ` ${each('filterd', (r) => +fmt(get(r)))} | ${each('dnsdist', (r) => +fmt(get(r)))} |` +
      extra.map((w) => ` ${each(w, (r) => +fmt(get(r)))} |`).join('')
  )
}

if (idles.length === 0) process.exit(0)
console.log()
console.log(`${idle} idle DoT connections (handshake and one query each, then silent)`)
console.log(
  '| server | opened (failed) | open time s | RSS before → with, MB | KiB per connection | still open at the end |'
)
console.log('|---|---:|---:|---:|---:|---:|')
for (const i of idles) {
  const perConn = (i.rssWith - i.rssBefore) / Math.max(1, i.opened.open)
  console.log(
    `| ${i.who} | ${i.opened.open} (${i.opened.failed}) | ${(i.opened.ms / 1000).toFixed(1)} | ${(i.rssBefore / 1024).toFixed(1)} → ${(i.rssWith / 1024).toFixed(1)} | ${perConn.toFixed(1)} | ${i.end.stillOpen} |`
  )
}
const without = udp.filter((u) => !u.with).map((u) => u.qps)
const withIdle = udp.filter((u) => u.with).map((u) => u.qps)
console.log()
console.log(
  `filterd UDP q/s (dnsperf -c 16 -q 100), without idle DoT connections: median ${med(without)} (${without.join(' / ')}); ` +
    `with ${idle}: median ${med(withIdle)} (${withIdle.join(' / ')}); with / without ${(med(withIdle) / med(without)).toFixed(3)}`
)
