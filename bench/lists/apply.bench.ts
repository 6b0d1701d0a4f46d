/**
 * List subscriptions: the time to apply a whole list of N names to a fresh store (as its first copy),
 * then one changed line (one name out, one in) as a difference, and for a policy that follows the store
 * the time to take each in (a full read of the entries after the first copy; the difference alone
 * after the change). Real LMDB in a temp dir, no network: the download is engine/lists/fetch.ts's.
 *
 *   node dist/bench/lists/apply.bench.js [names, default 200000]
 */
import { CategoryDb } from '../../engine/catdb/index.js'
import { applyEntries } from '../../engine/lists/apply.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from '../../engine/policy/index.js'
import { Store } from '../../engine/store/index.js'
import { makeTempDir } from '../../engine/testing/temp.js'
import { createBuiltinWhitelist } from '../../engine/whitelist/index.js'

const N = Number(process.argv[2] ?? 200_000)
const { dir, cleanup } = makeTempDir('filterd-bench-lists-')
const store = Store.open(dir)
const policy = new Policy({
  store,
  categories: new CategoryDb(store),
  builtin: createBuiltinWhitelist([]),
  safeHosts: loadSafeHosts()
})
const names = new Set(Array.from({ length: N }, (_, i) => `host-${i}.bench-${i % 977}.example`))
const ms = (t0: bigint): string => (Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)

let t0 = process.hrtime.bigint()
const first = await applyEntries(store, 'bench', names, 'black')
console.log(`first copy: ${first.added} entries written in ${ms(t0)} ms`)
t0 = process.hrtime.bigint()
policy.watcher.check()
console.log(`policy took the first copy in: ${ms(t0)} ms (reads every entry)`)

names.delete('host-0.bench-0.example')
names.add('new-name.example')
t0 = process.hrtime.bigint()
const diff = await applyEntries(store, 'bench', names, 'black')
console.log(`one changed line: +${diff.added} -${diff.removed} written in ${ms(t0)} ms (compare and write)`)
t0 = process.hrtime.bigint()
policy.watcher.check()
console.log(`policy took the difference in: ${ms(t0)} ms`)
const v = policy.evaluate('10.0.0.1', new HostKeys('www.new-name.example'), new Verdict())
if (v.action !== 'block') throw new Error('the new name is not blocked')
console.log(`rss: ${Math.round(process.memoryUsage().rss / 1048576)} MiB`)
await store.close()
cleanup()
