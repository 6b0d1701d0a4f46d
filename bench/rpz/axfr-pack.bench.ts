/**
 * RPZ out: the cost of an AXFR of an N-name category zone in the rpz role's own code (building the
 * zone's triggers, then packing every message, without the socket): `node dist/bench/rpz/axfr-pack.bench.js [names]`.
 * Prints the time to build the zone, the time to pack the transfer, messages, bytes and RSS.
 */
import { RpzZone, cnameAction } from '../../engine/rpz-zones/zone.js'
import { packRecords, transferRecords } from '../../engine/rpz-zones/transfer-out.js'
import { CLASS_IN, TYPE_AXFR } from '../../engine/rpz-zones/message.js'

const names = Number(process.argv[2] ?? 1_000_000)
const block = cnameAction('block.isp.example')
let t = performance.now()
const entries = new Map<string, string>()
for (let i = 0; i < names; i++) {
  const name = `site-${i.toString(36)}.example${i % 50}.com`
  entries.set(name, block)
  entries.set(`*.${name}`, block)
}
const zone = new RpzZone(
  {
    origin: 'cat-7.rpz.filterd',
    soa: { mname: 'localhost', rname: 'hostmaster.localhost', refresh: 300, retry: 60, expire: 604800, minimum: 60 },
    ttl: 60
  },
  1,
  entries
)
const built = performance.now() - t
t = performance.now()
let messages = 0
let bytes = 0
const q = { name: zone.origin, type: TYPE_AXFR, class: CLASS_IN }
for (const m of packRecords(1, q, transferRecords(zone, TYPE_AXFR, undefined).records)) {
  messages++
  bytes += m.length
}
const packed = performance.now() - t
console.log(
  JSON.stringify({
    names,
    records: entries.size,
    buildMs: Math.round(built),
    packMs: Math.round(packed),
    recordsPerSecond: Math.round(entries.size / (packed / 1000)),
    messages,
    megabytes: +(bytes / 1e6).toFixed(1),
    rssMB: Math.round(process.memoryUsage().rss / 1e6)
  })
)
