/**
 * The category caches' lookup: the typed-array KeyTable (engine/names/key-table.ts) against the Map
 * it replaced, both holding `count` names and asked for every one of them in turn, each time with a
 * fresh key string made from bytes (as the DNS path makes it from the query). The ceiling is making
 * the key string alone.
 *
 *   node dist/bench/catdb/key-table.bench.js [count=100000]
 */
import { Bench } from 'tinybench'
import { ABSENT, KeyTable } from '../../engine/names/key-table.js'

const count = Number(process.argv[2] ?? 100_000)
const names = Array.from({ length: count }, (_, i) => `${i % 3 === 0 ? 'www.' : ''}site${i}.example${i % 5}.com`)
const wire = names.map((n) => Buffer.from(n, 'latin1'))
const map = new Map<string, number>()
const table = new KeyTable(count * 2)
names.forEach((n, i) => {
  map.set(n, i)
  table.set(n, i)
})

let next = 0
const fresh = (): string => {
  const b = wire[next]! // next < count
  next = next + 1 === count ? 0 : next + 1
  return b.toString('latin1', 0, b.length)
}

let sink = 0
const bench = new Bench({ time: 2000 })
bench
  .add('key string only (ceiling)', () => {
    sink += fresh().length
  })
  .add('Map.get', () => {
    sink += map.get(fresh()) ?? 0
  })
  .add('KeyTable.get', () => {
    const v = table.get(fresh())
    sink += v === ABSENT ? 0 : v
  })
await bench.run()
console.table(bench.table())
console.log(`${count} names; checksum ${sink}`)
