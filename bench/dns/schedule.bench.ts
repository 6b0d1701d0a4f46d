// Schedules on the DNS path: per-query CPU for 100,000 users each with a two-window schedule
// against 100,000 users without one, in the same run and process (alternating rounds, medians), and the
// time a boundary switch costs when every scheduled user switches at the same second: the timer's work
// (the board steps its schedules) and any extra cost of each user's first query after it.
// Run: npm run build && node dist/bench/dns/schedule.bench.js [USERS=100000] [ROUNDS=7] [DISTINCT=1000]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, loadavg } from 'node:os'
import { join } from 'node:path'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { Judge, compileBlockAnswers } from '../../engine/judge/index.js'
import { Policy, loadSafeHosts } from '../../engine/policy/index.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import { Store } from '../../engine/store/index.js'
import { fillScheduleStore } from './schedule-fill.js'
import { createBuiltinWhitelist } from '../../engine/whitelist/index.js'
import { ANSWER_BUFFER_SIZE } from '../../engine/wire/index.js'

const USERS = Number(process.argv[2] ?? 100_000)
const ROUNDS = Number(process.argv[3] ?? 7)
const DISTINCT = Number(process.argv[4] ?? 1000)
const tmp = mkdtempSync(join(tmpdir(), 'filterd-sched-bench-'))
const store = Store.open(join(tmp, 'db'))

/** User i's address: plain users in 10.0.0.0/9, scheduled ones in 10.128.0.0/9. */
const address = (scheduled: boolean, i: number): string =>
  `10.${(scheduled ? 128 : 0) + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`

const pad = (n: number): string => String(n).padStart(2, '0')
const morning = (m: number): string => `${pad(5 + Math.floor(m / 60))}:${pad(m % 60)}`

/** Two windows on school days; every rule opens at 16:00 UTC (the switch measured), ends vary (DISTINCT distinct). */
function rule(i: number): ScheduledRule {
  const k = i % DISTINCT
  return {
    name: 'school days',
    timezone: 'UTC',
    windows: [
      // Up to 1,200 distinct ends; beyond them the morning window starts at one of 120 minutes from 05:00.
      {
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        from: morning(Math.floor(k / 1200) % 120),
        to: `07:${pad(10 + (k % 50))}`
      },
      {
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        from: '16:00',
        to: `${17 + (Math.floor(k / 60) % 4)}:${pad(k % 60)}`
      }
    ],
    filter: [CATEGORY.SOCIAL_NETWORKS]
  }
}

await fillScheduleStore(store, USERS, address, rule)

// Thursday 2026-11-26, 15:59:59 UTC: one second before every scheduled user's 16:00 boundary.
const clock = { now: Date.parse('2026-11-26T15:59:59Z') }
const policy = new Policy({
  store,
  categories: new CategoryDb(store),
  builtin: createBuiltinWhitelist([]),
  safeHosts: loadSafeHosts(undefined),
  maxCachedAddresses: 3 * USERS,
  clock: () => clock.now
})
policy.watcher.stop()
const judge = new Judge({
  policy,
  answers: compileBlockAnswers({ 'blockpage-ip': ['192.0.2.1'], ttl: 60 } as never),
  clientSubnet: false,
  wantCats: true
})
const QUERIES = 4096
const msgs: Buffer[] = []
for (let i = 0; i < QUERIES; i++)
  msgs.push(
    dnsPacket.encode({
      type: 'query',
      id: i,
      questions: [{ type: 'A', name: `www.site${(i * 7919) % 100_000}.example` }]
    })
  )
const out = Buffer.allocUnsafe(ANSWER_BUFFER_SIZE)
const plain = Array.from({ length: USERS }, (_, i) => address(false, i))
const scheduled = Array.from({ length: USERS }, (_, i) => address(true, i))

/** CPU µs per query over `n` queries, each from the next user of `addrs`. */
function run(addrs: string[], n: number): number {
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) judge.judge(msgs[i % QUERIES]!, addrs[(i * 31) % addrs.length]!, out)
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / n
}

/** CPU ms for one query from each user of `addrs` in turn (sequential order, unlike `run`). */
function each(addrs: string[]): number {
  const c0 = process.cpuUsage()
  for (let i = 0; i < addrs.length; i++) judge.judge(msgs[i % QUERIES]!, addrs[i]!, out)
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / 1000
}

// Warm every user's snapshot (the DNS server keeps them across queries), both sides in the same order
// so that their snapshots lie alike in memory (the rounds read them in another order).
const warmPlain = each(plain)
const warmScheduled = each(scheduled)
console.log(
  `${USERS} users each side; first query of each (snapshot built), CPU: plain ${warmPlain.toFixed(0)} ms, scheduled ${warmScheduled.toFixed(0)} ms; ${policy.schedules.size} distinct schedules`
)

const N = 400_000
const results: Array<[number, number]> = []
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    const p = run(plain, N)
    results.push([p, run(scheduled, N)])
  } else {
    const s = run(scheduled, N)
    results.push([run(plain, N), s])
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const mp = median(results.map((x) => x[0]))
const ms = median(results.map((x) => x[1]))
console.log(
  `per query, CPU (median of ${ROUNDS} alternating rounds of ${N}): without schedules ${mp.toFixed(3)} µs, with ${ms.toFixed(3)} µs (${(((ms - mp) / mp) * 100).toFixed(1)}%)`
)
console.log(`rounds: ${results.map(([p, s]) => `${p.toFixed(2)}/${s.toFixed(2)}`).join(' ')}`)

// The boundary: every scheduled user's rule opens at 16:00:00. Each pass is one query from every
// scheduled user in the same order, so the pass right after the switch, against the passes before and
// after it, shows any work a switch leaves to each user's first query.
const social = dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'www.site1.example' }] })
/** How many of a sample of scheduled users a query for a name of the scheduled category is blocked for. */
function sampleBlocked(): number {
  let n = 0
  for (let i = 0; i < USERS; i += 97) {
    judge.judge(social, scheduled[i]!, out)
    if (judge.verdict.reason === 'schedule-category') n++
  }
  return n
}
// Fields of the board since the switch became a step (optional: this file also runs on the build before).
const board = policy.schedules as unknown as {
  switched?: number
  pendingLayouts?: number
  refillPending?: () => void
  pendingFiles?: number
  fileNow?: () => void
}
const blockedBefore = sampleBlocked()
each(scheduled)
const passBefore = each(scheduled)
clock.now = Date.parse('2026-11-26T16:00:00Z')
const t0 = performance.now()
const c0 = process.cpuUsage()
policy.schedules.now()
const c1 = process.cpuUsage(c0)
const timer = performance.now() - t0
const timerCpu = (c1.user + c1.system) / 1000
// Since the switch leaves filing each schedule under its next boundary to the background: its CPU apart.
const unfiled = board.pendingFiles ?? 0
const c2 = process.cpuUsage()
board.fileNow?.()
const c3 = process.cpuUsage(c2)
const filingCpu = (c3.user + c3.system) / 1000
const firstAfter = each(scheduled)
const passAfter = each(scheduled)
const blockedAfter = sampleBlocked()
const pending = board.pendingLayouts ?? 0
const t2 = performance.now()
board.refillPending?.()
const layouts = performance.now() - t2
console.log(
  `boundary 16:00 for ${USERS} users (${policy.schedules.size} schedules, ${board.switched ?? '?'} switched): timer ${timerCpu.toFixed(1)} ms CPU (${timer.toFixed(1)} ms wall); ` +
    `filed in the background after it: ${unfiled} schedules, ${filingCpu.toFixed(1)} ms CPU; ` +
    `one query from every user, CPU: ${passBefore.toFixed(0)} ms before, ${firstAfter.toFixed(0)} ms right after, ${passAfter.toFixed(0)} ms next ` +
    `(first pass after minus the mean of the others: ${(firstAfter - (passBefore + passAfter) / 2).toFixed(0)} ms); ` +
    `background layouts queued ${pending}, ${layouts.toFixed(1)} ms; sampled users blocked by the schedule: ` +
    `${blockedBefore} at 15:59:59, ${blockedAfter}/${Math.ceil(USERS / 97)} at 16:00:00`
)
console.log(
  `(node ${process.version}; load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')})`
)
policy.schedules.stop()
await store.close()
rmSync(tmp, { recursive: true, force: true })
