// Memory per cached address of the policy's per-address snapshot cache: USERS users, one address each,
// spread over DISTINCT policies (filter and safe-search switch; every second user also one of 100 shared
// scheduled rules, every LISTS-th user a blacklist of its own, every OWN-th user a schedule of its own
// instead: windows no other user has), every address cached. Reports the JS heap and RSS the cache added,
// per address, after a full GC (and the RSS before it); the heap figure counts ArrayBuffer stores too, and the time to fill it. It uses only `new Policy` and `snapshotFor`, so
// the compiled file runs against an older build too (copy it into that build's dist/bench/policy/): the
// two numbers in the same run of the machine are the comparison. HEAPSNAPSHOT=file writes a heap
// snapshot after the fill (bench/policy/heap-summary.ts sums it by object kind).
// FAMILY says each user's addresses: `v4` (one IPv4 address, the default), `v6` (one IPv6 address), `both`
// (one of each, as an ISP's dual-stack subscriber); the figures are per cached address. SHAPE says an own
// schedule's windows: `weekend` (one window on Saturday and Sunday, the default) or `daily` (two windows
// every day, four boundaries a day, as bench/dns/isp-host-setup.ts makes them).
// Run: npm run build && node --expose-gc dist/bench/policy/snapshot-memory.bench.js [USERS=200000] [DISTINCT=16] [LISTS=100] [OWN=0] [FAMILY=v4] [SHAPE=weekend]
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
const FAMILY = process.argv[6] ?? 'v4'
if (!['v4', 'v6', 'both'].includes(FAMILY)) throw new Error(`FAMILY is v4, v6 or both, not ${FAMILY}`)
const SHAPE = process.argv[7] ?? 'weekend'
if (!['weekend', 'daily'].includes(SHAPE)) throw new Error(`SHAPE is weekend or daily, not ${SHAPE}`)
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
const v4 = (i: number): string => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`
// Canonical text (engine/net/ip.ts formatIp), as the DNS server passes a peer's address.
const v6 = (i: number): string => `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`
/** User i's addresses. */
const addressesOf = (i: number): string[] => (FAMILY === 'v4' ? [v4(i)] : FAMILY === 'v6' ? [v6(i)] : [v4(i), v6(i)])
const ADDRESSES = USERS * (FAMILY === 'both' ? 2 : 1)
/** Address a (0 to ADDRESSES - 1): with both, each user's IPv4 ones first, then the IPv6 ones. */
const address = (a: number): string => (a < USERS ? addressesOf(a)[0]! : v6(a - USERS))

/** Policy k: the categories of k's bits (at least gambling), safe search on for odd k beyond the bits. */
function policyOf(k: number): Pick<UserRecord, 'filter' | 'safesearch'> {
  const filter: number[] = [CATEGORY.GAMBLING]
  for (let b = 1; b < FILTERABLE.length; b++) if ((k >> (b - 1)) & 1) filter.push(FILTERABLE[b]!)
  return { filter, safesearch: (k >> (FILTERABLE.length - 1)) & 1 ? 'on' : 'off' }
}

const hhmm = (m: number): string =>
  `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`
const EVERY_DAY: ScheduledRule['windows'][number]['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']

/** A schedule no other user has (up to 81,420 of them weekend, 35,400 daily): its windows' starts and lengths from `i`. */
function ownRule(i: number): ScheduledRule {
  if (SHAPE === 'daily') {
    const from = i % 600
    const length = 1 + (Math.floor(i / 600) % 59)
    const windows: ScheduledRule['windows'] = [
      { days: EVERY_DAY, from: hhmm(from), to: hhmm(from + length) },
      { days: EVERY_DAY, from: hhmm(720 + from), to: hhmm(780 + from + length) }
    ]
    return { name: 'own', timezone: 'UTC', windows, filter: [CATEGORY.VIDEO_STREAMING] }
  }
  const from = i % 1380
  const to = from + 1 + (Math.floor(i / 1380) % 59)
  return {
    name: 'own',
    timezone: 'UTC',
    windows: [{ days: ['sat', 'sun'], from: hhmm(from), to: hhmm(to) }],
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
      const user: UserRecord = { ...store.newUser(name), ...policyOf(i % DISTINCT), ip: addressesOf(i) }
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
  maxCachedAddresses: ADDRESSES
})
policy.watcher.stop()
// Reads every address's user once first, so that the LMDB pages are resident before the baseline.
let owners = 0
for (let a = 0; a < ADDRESSES; a++) if (store.getUser(store.userForAddress(address(a)) ?? '') !== undefined) owners++
if (owners !== ADDRESSES) throw new Error(`${owners} of ${ADDRESSES} addresses have a user`)

// The JS heap with the typed arrays' stores (outside the heap: a cache of typed arrays shows up only there).
const measure = (): { heap: number; rss: number } => {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss }
}
const before = measure()
const t0 = process.hrtime.bigint()
for (let a = 0; a < ADDRESSES; a++) policy.snapshotFor(address(a))
const fillMs = Number(process.hrtime.bigint() - t0) / 1e6
// RSS as a process that never forces a collection sees it: the builds' garbage and the heap's headroom too.
const ungc = process.memoryUsage().rss
const after = measure()
if (process.env.HEAPSNAPSHOT !== undefined) writeHeapSnapshot(process.env.HEAPSNAPSHOT)
// Read after the measurement, so the policy and its cache stay reachable through it (V8 drops dead locals).
const last = policy.snapshotFor(address(ADDRESSES - 1)).user
if (last !== `u${USERS - 1}`) throw new Error(`the last address is ${last}'s`)
const perAddress = (b: number): string => `${(b / ADDRESSES).toFixed(0)} B`
console.log(
  JSON.stringify({
    node: process.version,
    users: USERS,
    family: FAMILY,
    addresses: ADDRESSES,
    distinct: DISTINCT,
    listsEvery: LISTS,
    ownScheduleEvery: OWN,
    shape: SHAPE,
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
