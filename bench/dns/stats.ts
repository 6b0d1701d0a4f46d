// Reads dnsperf output (with -v per-query lines "> RCODE name type latency") from stdin and prints
// one JSON line: qps, lost, p50/p99/p999 latency in ms. With an argument SKIP, also p99Steady: the
// p99 of the answers after the first SKIP (dnsperf prints them as they arrive, so at a fixed rate R
// a SKIP of R leaves out the first second, when the run's connections are opened and handshaken).
import { createInterface } from 'node:readline'

const lat: number[] = []
let qps = 0
let lost = 0
for await (const line of createInterface({ input: process.stdin })) {
  if (line.startsWith('> ')) {
    const v = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (Number.isFinite(v)) lat.push(v * 1000)
  } else if (line.includes('Queries per second:')) {
    qps = Number(line.split(':')[1])
  } else if (line.includes('Queries lost:')) {
    lost = Number(line.split(':')[1]?.trim().split(' ')[0])
  }
}
const skip = Number(process.argv[2] ?? 0)
const steady = lat.slice(skip).sort((a, b) => a - b)
lat.sort((a, b) => a - b)
const pctOf = (xs: number[], p: number): number =>
  xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!
const pct = (p: number): number => pctOf(lat, p)
console.log(
  JSON.stringify({
    qps: Math.round(qps),
    lost,
    p50: +pct(0.5).toFixed(3),
    p99: +pct(0.99).toFixed(3),
    p999: +pct(0.999).toFixed(3),
    ...(skip > 0 ? { p99Steady: +pctOf(steady, 0.99).toFixed(3) } : {}),
    samples: lat.length
  })
)
