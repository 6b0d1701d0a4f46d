// Reads dnsperf output (with -v per-query lines "> RCODE name type latency") from stdin and prints
// one JSON line: qps, lost, p50/p99/p999 latency in ms. With an argument SKIP, also p99Steady: the
// p99 of the answers after the first SKIP (dnsperf prints them as they arrive, so at a fixed rate R
// a SKIP of R leaves out the first second, when the run's connections are opened and handshaken),
// and firstSecond: how many of the run's answers slower than its p99 are among those first SKIP, and
// the first SKIP's p99 and max. With FIRST_SECOND_BUCKETS=N (and SKIP), the first SKIP answers in N
// buckets by arrival order (at a fixed rate, N slices of the run's first second), one line on stderr:
// each bucket's p50/p99/max in ms and how many answers in it were over 2 ms.
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
const first = lat.slice(0, skip)
const steady = lat.slice(skip).sort((a, b) => a - b)
const pctOf = (xs: number[], p: number): number =>
  xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!
const buckets = Number(process.env['FIRST_SECOND_BUCKETS'] ?? 0)
if (skip > 0 && buckets > 0) {
  const size = Math.ceil(skip / buckets)
  const parts: string[] = []
  for (let i = 0; i < first.length; i += size) {
    const b = first.slice(i, i + size).sort((x, y) => x - y)
    parts.push(
      `${pctOf(b, 0.5).toFixed(2)}/${pctOf(b, 0.99).toFixed(2)}/${pctOf(b, 1).toFixed(1)}:${b.filter((x) => x > 2).length}`
    )
  }
  process.stderr.write(`  first second by ${size} answers (p50/p99/max ms:over 2 ms) ${parts.join(' ')}\n`)
}
const sortedFirst = [...first].sort((a, b) => a - b)
lat.sort((a, b) => a - b)
const pct = (p: number): number => pctOf(lat, p)
const p99 = pct(0.99)
console.log(
  JSON.stringify({
    qps: Math.round(qps),
    lost,
    p50: +pct(0.5).toFixed(3),
    p99: +p99.toFixed(3),
    p999: +pct(0.999).toFixed(3),
    ...(skip > 0
      ? {
          p99Steady: +pctOf(steady, 0.99).toFixed(3),
          firstSecond: {
            overP99: first.filter((x) => x > p99).length,
            ofOverP99: lat.length - Math.floor(0.99 * lat.length),
            p99: +pctOf(sortedFirst, 0.99).toFixed(3),
            max: +pctOf(sortedFirst, 1).toFixed(3)
          }
        }
      : {}),
    samples: lat.length
  })
)
