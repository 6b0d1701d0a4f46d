// Memory per cached address of the policy's per-address snapshot cache: USERS users, one address each,
// spread over DISTINCT policies (filter and safe-search switch; every second user also one of 100 shared
// scheduled rules, every LISTS-th user a blacklist of its own, every OWN-th user a schedule of its own
// instead: windows no other user has), every address cached. Reports the JS heap and RSS the cache added,
// per address, after a full GC (and the RSS before it), and the time to fill it. It uses only `new Policy` and `snapshotFor`, so
// the compiled file runs against an older build too (copy it into that build's dist/bench/policy/): the
// two numbers in the same run of the machine are the comparison. HEAPSNAPSHOT=file writes a heap
// snapshot after the fill (bench/policy/heap-summary.ts sums it by object kind).
// Run: npm run build && node --expose-gc dist/bench/policy/snapshot-memory.bench.js [USERS=200000] [DISTINCT=16] [LISTS=100] [OWN=0]
import { mkdtempSync, rmSync } from 'node:fs'
import { writeHeapSnapshot } from 'node:v8'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { Policy, loadSafeHosts } from '../../engine/policy/index.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import { Store, type UserRecord } from '../../engine/store/index.js'
import { createBuiltinWhitelist } from '../../engine/whitelist/index.js'

const USERS = Number(process.argv[2] ?? 200_000)
const DISTINCT = Number(process.argv[3] ?? 16)
const LISTS = Number(process.argv[4] ?? 100)
const OWN = Number(process.argv[5] ?? 0)
const BATCH = 5000
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const FILTERABLE = [
  CATEGORY.GAMBLING,
  CATEGORY.PORNOGRAPHY,
  CATEGORY.SOCIAL_NETWORKS,
  CATEGORY.VIDEO_STREAMING,
  CATEGORY.NEWS,
  CATEGORY.SEARCH_ENGINES
]
const address = (i: number): string => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`

/** Policy k: the categories of k's bits (at least gambling), safe search on for odd k beyond the bits. */
function policyOf(k: number): Pick<UserRecord, 'filter' | 'safesearch'> {
  const filter: number[] = [CATEGORY.GAMBLING]
  for (let b = 1; b < FILTERABLE.length; b++) if ((k >> (b - 1)) & 1) filter.push(FILTERABLE[b]!)
  return { filter, safesearch: (k >> (FILTERABLE.length - 1)) & 1 ? 'on' : 'off' }
}

/** A schedule no other user has (up to 81,420 of them): its window's start and length from `i`. */
function ownRule(i: number): ScheduledRule {
  const hhmm = (m: number): string =>
    `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`
  const from = i % 1380
  return {
    name: 'own',
    timezone: 'UTC',
    windows: [{ days: ['sat', 'sun'], from: hhmm(from), to: hhmm(from + 1 + (Math.floor(i / 1380) % 59)) }],
    filter: [CATEGORY.VIDEO_STREAMING]
  }
}

function rule(i: number): ScheduledRule {
  return {
    name: 'evenings',
    timezone: 'UTC',
    windows: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '18:00', to: `22:${String(i % 100).padStart(2, '0')}` }
    ],
    filter: [CATEGORY.SOCIAL_NETWORKS]
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'filterd-snapmem-'))
const store = Store.open(join(tmp, 'db'))
for (let start = 0; start < USERS; start += BATCH) {
  await store.write((w) => {
    for (let i = start; i < Math.min(USERS, start + BATCH); i++) {
      const name = `u${i}`
      const user: UserRecord = { ...store.newUser(name), ...policyOf(i % DISTINCT), ip: [address(i)] }
      if (OWN > 0 && i % OWN === 0) user.schedules = [ownRule(i / OWN)]
      else if (i % 2 === 1) user.schedules = [rule(i)]
      w.putUser(user)
      w.claimAddresses(name, user.ip)
      if (LISTS > 0 && i % LISTS === 0) w.putList(name, 'black', [`own${i}.example`, `ads${i}.example`])
    }
  })
}

const policy = new Policy({
  store,
  categories: new CategoryDb(store),
  builtin: createBuiltinWhitelist([]),
  safeHosts: loadSafeHosts(undefined),
  maxCachedAddresses: USERS
})
policy.watcher.stop()
// Reads every address's user once first, so that the LMDB pages are resident before the baseline.
let owners = 0
for (let i = 0; i < USERS; i++) if (store.getUser(store.userForAddress(address(i)) ?? '') !== undefined) owners++
if (owners !== USERS) throw new Error(`${owners} of ${USERS} addresses have a user`)

const measure = (): { heap: number; rss: number } => {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heap: m.heapUsed, rss: m.rss }
}
const before = measure()
const t0 = process.hrtime.bigint()
for (let i = 0; i < USERS; i++) policy.snapshotFor(address(i))
const fillMs = Number(process.hrtime.bigint() - t0) / 1e6
// RSS as a process that never forces a collection sees it: the builds' garbage and the heap's headroom too.
const ungc = process.memoryUsage().rss
const after = measure()
if (process.env.HEAPSNAPSHOT !== undefined) writeHeapSnapshot(process.env.HEAPSNAPSHOT)
// Read after the measurement, so the policy and its cache stay reachable through it (V8 drops dead locals).
const last = policy.snapshotFor(address(USERS - 1)).user
if (last !== `u${USERS - 1}`) throw new Error(`the last address is ${last}'s`)
const perAddress = (b: number): string => `${(b / USERS).toFixed(0)} B`
console.log(
  JSON.stringify({
    node: process.version,
    users: USERS,
    distinct: DISTINCT,
    listsEvery: LISTS,
    ownScheduleEvery: OWN,
    fillMs: Math.round(fillMs),
    heapPerAddress: perAddress(after.heap - before.heap),
    rssPerAddress: perAddress(after.rss - before.rss),
    rssBeforeGcPerAddress: perAddress(ungc - before.rss),
    heapMB: +((after.heap - before.heap) / 2 ** 20).toFixed(1),
    rssMB: +((after.rss - before.rss) / 2 ** 20).toFixed(1)
  })
)
await store.close()
rmSync(tmp, { recursive: true, force: true })
