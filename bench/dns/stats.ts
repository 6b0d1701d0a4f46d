// Reads dnsperf output (with -v per-query lines "> RCODE name type latency") from stdin and prints
// one JSON line: qps, lost, p50/p99/p999 latency in ms.
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
lat.sort((a, b) => a - b)
const pct = (p: number): number => (lat.length === 0 ? NaN : lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!)
console.log(
  JSON.stringify({
    qps: Math.round(qps),
    lost,
    p50: +pct(0.5).toFixed(3),
    p99: +pct(0.99).toFixed(3),
    p999: +pct(0.999).toFixed(3),
    samples: lat.length
  })
)
