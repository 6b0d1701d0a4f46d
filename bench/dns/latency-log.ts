// Reads an h2load --log-file (tab-separated: start time µs, HTTP status, [stream ID,] duration µs) from
// stdin and prints one JSON line: requests, non-200 answers, p50/p99/p999 latency in ms.
import { createInterface } from 'node:readline'

const lat: number[] = []
let bad = 0
for await (const line of createInterface({ input: process.stdin })) {
  const cols = line.split('\t')
  if (cols.length < 3) continue
  if (cols[1] !== '200') bad++
  lat.push(Number(cols.at(-1)) / 1000)
}
lat.sort((a, b) => a - b)
const pct = (p: number): number => (lat.length === 0 ? NaN : lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!)
console.log(
  JSON.stringify({
    requests: lat.length,
    bad,
    p50: +pct(0.5).toFixed(3),
    p99: +pct(0.99).toFixed(3),
    p999: +pct(0.999).toFixed(3)
  })
)
