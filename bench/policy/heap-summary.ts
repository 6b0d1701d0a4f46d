// Sums a V8 heap snapshot (`.heapsnapshot`, as node:v8 writeHeapSnapshot writes it) by object kind: the
// node type and, for objects, the constructor's name; strings, arrays and hash tables by type. What
// bench/policy/snapshot-memory.bench.ts uses to say where the bytes of a cached address go.
// Run: node dist/bench/policy/heap-summary.js FILE [TOP=25]
import { readFileSync } from 'node:fs'

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } }
  nodes: number[]
  strings: string[]
}

const file = process.argv[2]
if (file === undefined) throw new Error('usage: heap-summary FILE [TOP]')
const top = Number(process.argv[3] ?? 25)
const snap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot
const fields = snap.snapshot.meta.node_fields
const types = snap.snapshot.meta.node_types[0]
const width = fields.length
const typeAt = fields.indexOf('type')
const nameAt = fields.indexOf('name')
const sizeAt = fields.indexOf('self_size')
const sums = new Map<string, { count: number; bytes: number }>()
let total = 0
for (let i = 0; i < snap.nodes.length; i += width) {
  const type = types[snap.nodes[i + typeAt]!]!
  const name = snap.strings[snap.nodes[i + nameAt]!]!
  const kind = type === 'object' || type === 'closure' ? `${type} ${name}` : type
  const bytes = snap.nodes[i + sizeAt]!
  total += bytes
  const s = sums.get(kind) ?? { count: 0, bytes: 0 }
  s.count++
  s.bytes += bytes
  sums.set(kind, s)
}
const rows = [...sums].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)
console.log(`total ${(total / 2 ** 20).toFixed(1)} MB`)
for (const [kind, { count, bytes }] of rows)
  console.log(`${(bytes / 2 ** 20).toFixed(1).padStart(8)} MB ${String(count).padStart(9)}  ${kind}`)
