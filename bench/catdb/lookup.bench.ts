/**
 * Category lookups: the LMDB suffix walk that every role runs (CategoryDb.categorize, and a walk
 * of getRaw, which returns the interned bytes shared with the cache, as the DNS server's findRaw
 * reads them, decoding nothing) against an in-memory Map holding the same
 * table, on a realistic name mix: the popularity list of ../shared/data/top-domains.csv.gz when
 * present (host names by query volume), a synthetic mix otherwise. About a quarter of the names
 * are categorized, as the issue asks; the table also holds filler names to reach `size` entries.
 *
 *   node dist/bench/catdb/lookup.bench.js [size=1000000]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { Bench } from 'tinybench'
import { CategoryDb, CategoryDbBuilder } from '../../engine/catdb/index.js'
import { Store } from '../../engine/store/index.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const topFile = join(root, '../shared/data/top-domains.csv.gz')
const size = Number(process.argv[2] ?? 1_000_000)

function names(): string[] {
  if (existsSync(topFile)) {
    return gunzipSync(readFileSync(topFile))
      .toString('utf8')
      .split('\n')
      .map((l) => l.split(',')[1]?.trim().toLowerCase() ?? '')
      .filter((n) => n.includes('.'))
  }
  return Array.from({ length: 100_000 }, (_, i) => `${i % 3 === 0 ? 'www.' : ''}site${i}.example${i % 5}.com`)
}

const queryNames = names()
const categorized = queryNames.filter((_, i) => i % 9 === 0)
const dir = mkdtempSync(join(tmpdir(), 'filterd-lookup-bench-'))
const store = Store.open(dir)
const map = new Map<string, number[]>()
const builder = await CategoryDbBuilder.begin(store)
for (const n of categorized) {
  map.set(n, [40])
  await builder.put(n, false, [40])
}
for (let i = map.size; i < size; i++) {
  const n = `filler${i}.example.net`
  map.set(n, [30])
  await builder.put(n, false, [30])
}
await builder.commit()
const db = new CategoryDb(store)

function mapWalk(name: string): number[] | undefined {
  for (let key = name; ;) {
    const hit = map.get(key)
    if (hit !== undefined) return hit
    const dot = key.indexOf('.')
    if (dot < 0) return undefined
    key = key.slice(dot + 1)
  }
}

function rawWalk(name: string): number {
  for (let key = name; ;) {
    const raw = db.getRaw(key)
    if (raw !== undefined) return raw.length
    const dot = key.indexOf('.')
    if (dot < 0) return 0
    key = key.slice(dot + 1)
  }
}

let i = 0
const next = (): string => queryNames[i++ % queryNames.length]!
let hits = 0
for (const n of queryNames) if (mapWalk(n) !== undefined) hits++
const bench = new Bench({ time: 1500, warmupTime: 300 })
bench
  .add('Map suffix walk (baseline)', () => {
    mapWalk(next())
  })
  .add('LMDB getRaw suffix walk (DNS hot path)', () => {
    rawWalk(next())
  })
  .add('LMDB categorize (site record)', () => {
    db.categorize(next())
  })
await bench.run()
const hzOf = (t: { result?: unknown }): number =>
  (t.result as { throughput?: { mean: number } } | undefined)?.throughput?.mean ?? NaN
const base = hzOf(bench.tasks[0]!)
process.stdout.write(
  `node ${process.version}; table ${map.size} names; query mix ${queryNames.length} names, ${((100 * hits) / queryNames.length).toFixed(0)}% categorized\n`
)
process.stdout.write('| lookup | lookups/s | vs Map |\n|---|---:|---:|\n')
for (const t of bench.tasks) {
  const hz = hzOf(t)
  process.stdout.write(`| ${t.name} | ${Math.round(hz).toLocaleString('en-US')} | ${(hz / base).toFixed(2)} |\n`)
}
await store.close()
rmSync(dir, { recursive: true, force: true })
