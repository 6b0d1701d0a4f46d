/**
 * RPZ in: the time and memory to take in a feed of N QNAME triggers from a zone file (read, parse,
 * compile; what an AXFR's records go through after the wire), then one changed record applied as an
 * IXFR step, and the lookup cost of the loaded feed. No network: the transfer itself is measured by
 * the RPZ out benchmarks.
 *
 *   node --expose-gc dist/bench/rpz/feed-in.bench.js [records, default 3000000]
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { FeedFollower } from '../../engine/rpz-feeds/follower.js'
import { makeTempDir } from '../../engine/testing/temp.js'

const N = Number(process.argv[2] ?? 3_000_000)
const { dir, cleanup } = makeTempDir('filterd-bench-rpz-in-')
const file = join(dir, 'feed.rpz.zone')
// Written in chunks: a file of millions of lines never sits in this process as one array of strings,
// so the RSS before the load is the process's own.
const out = openSync(file, 'w')
writeSync(out, '$ORIGIN feed.rpz.\n$TTL 300\n@ SOA ns.feed.rpz. admin.feed.rpz. 1 3600 600 86400 60\n@ NS localhost.\n')
for (let i = 0; i < N; i += 10_000) {
  let chunk = ''
  for (let j = i; j < Math.min(N, i + 10_000); j++)
    chunk += j % 2 === 0 ? `host-${j}.bench-${j % 977}.example CNAME .\n` : `*.d-${j}.example CNAME .\n`
  writeSync(out, chunk)
}
closeSync(out)
;(globalThis as { gc?: () => void }).gc?.()
const rss0 = process.memoryUsage().rss
const ms = (t0: bigint): string => (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)

let peak = rss0
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50)
const t0 = process.hrtime.bigint()
const follower = new FeedFollower({ zone: 'feed.rpz', file, maxRecords: 10_000_000, maxBytes: 2 ** 32 })
await follower.start()
clearInterval(sampler)
peak = Math.max(peak, process.memoryUsage().rss)
if (follower.status.state !== 'ok') throw new Error(String(follower.status.lastError))
const heap = process.memoryUsage()
console.log(
  `${N} records taken in: ${ms(t0)} ms; RSS before ${(rss0 / 2 ** 20).toFixed(0)} MB, peak ${(peak / 2 ** 20).toFixed(0)} MB, after ${(heap.rss / 2 ** 20).toFixed(0)} MB (heap ${(heap.heapUsed / 2 ** 20).toFixed(0)} MB, array buffers ${(heap.arrayBuffers / 2 ** 20).toFixed(0)} MB, packed triggers ${((follower.feed?.packedBytes ?? 0) / 2 ** 20).toFixed(0)} MB)`
)

const feed = follower.feed!
const t1 = process.hrtime.bigint()
feed.applySteps([
  {
    from: 1,
    to: 2,
    deleted: [{ name: 'host-0.bench-0.example.feed.rpz', type: 5, ttl: 300, data: '' }],
    added: [{ name: 'new.example.feed.rpz', type: 5, ttl: 300, data: '' }]
  }
])
console.log(`one changed record (IXFR step) applied and enforced: ${ms(t1)} ms`)
if (feed.match('new.example')?.action.kind !== 'nxdomain') throw new Error('the change is not enforced')

const LOOKUPS = 1_000_000
const t2 = process.hrtime.bigint()
let hits = 0
for (let i = 0; i < LOOKUPS; i++) if (feed.match(`www.d-${(i * 2 + 1) % N}.example`) !== undefined) hits++
const ns = Number(process.hrtime.bigint() - t2) / LOOKUPS
console.log(`lookup: ${ns.toFixed(0)} ns per query name (${hits} of ${LOOKUPS} hit a wildcard)`)
follower.close()
cleanup()
