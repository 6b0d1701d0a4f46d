// Schedules on the DNS path (issue 27): per-query CPU for 100,000 users each with a two-window schedule
// against 100,000 users without one, in the same run and process (alternating rounds, medians), and the
// time a boundary switch costs when every scheduled user switches at the same second: the timer's work
// (the board's states) and the first query of each user after it (its effective view is rebuilt then).
// Run: npm run build && node dist/bench/dns/schedule.bench.js [USERS=100000] [ROUNDS=7]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, loadavg } from 'node:os'
import { join } from 'node:path'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDb, CategoryDbBuilder } from '../../engine/catdb/index.js'
import { Judge, compileBlockAnswers } from '../../engine/judge/index.js'
import { Policy, loadSafeHosts } from '../../engine/policy/index.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import { Store, type UserRecord } from '../../engine/store/index.js'
import { createBuiltinWhitelist } from '../../engine/whitelist/index.js'
import { ANSWER_BUFFER_SIZE } from '../../engine/wire/index.js'

const USERS = Number(process.argv[2] ?? 100_000)
const ROUNDS = Number(process.argv[3] ?? 7)
const DISTINCT = 1000
const tmp = mkdtempSync(join(tmpdir(), 'filterd-sched-bench-'))
const store = Store.open(join(tmp, 'db'))

/** User i's address: plain users in 10.0.0.0/9, scheduled ones in 10.128.0.0/9. */
const address = (scheduled: boolean, i: number): string =>
  `10.${(scheduled ? 128 : 0) + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`

/** Two windows on school days; every rule opens at 16:00 UTC (the switch measured), ends vary (1,000 distinct). */
function rule(i: number): ScheduledRule {
  const k = i % DISTINCT
  const pad = (n: number): string => String(n).padStart(2, '0')
  return {
    name: 'school days',
    timezone: 'UTC',
    windows: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '07:00', to: `07:${pad(10 + (k % 50))}` },
      {
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        from: '16:00',
        to: `${17 + (Math.floor(k / 60) % 4)}:${pad(k % 60)}`
      }
    ],
    filter: [CATEGORY.SOCIAL_NETWORKS]
  }
}

const b = await CategoryDbBuilder.begin(store)
for (let i = 0; i < 100_000; i++) {
  const cat = i % 8 === 0 ? CATEGORY.GAMBLING : i % 8 === 1 ? CATEGORY.SOCIAL_NETWORKS : CATEGORY.NEWS
  await b.put(`site${i}.example`, false, [cat])
}
await b.commit()
for (let start = 0; start < USERS; start += 5000) {
  await store.write((w) => {
    for (let i = start; i < Math.min(USERS, start + 5000); i++) {
      for (const scheduled of [false, true]) {
        const name = `${scheduled ? 's' : 'p'}${i}`
        const user: UserRecord = { ...store.newUser(name), filter: [CATEGORY.GAMBLING], ip: [address(scheduled, i)] }
        if (scheduled) user.schedules = [rule(i)]
        w.putUser(user)
        w.claimAddresses(name, user.ip)
      }
    }
  })
}

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

// Warm every user's snapshot (the DNS server keeps them across queries).
const w0 = performance.now()
run(plain, USERS)
const warmPlain = performance.now() - w0
const w1 = performance.now()
for (let i = 0; i < USERS; i++) judge.judge(msgs[i % QUERIES]!, scheduled[i]!, out)
const warmScheduled = performance.now() - w1
console.log(
  `${USERS} users each side; first query of each (snapshot built): plain ${warmPlain.toFixed(0)} ms, scheduled ${warmScheduled.toFixed(0)} ms; ${policy.schedules.size} distinct schedules`
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

// The boundary: every scheduled user's rule opens at 16:00:00.
const before = run(scheduled, USERS)
clock.now = Date.parse('2026-11-26T16:00:00Z')
const t0 = performance.now()
policy.schedules.now()
const timer = performance.now() - t0
const t1 = performance.now()
for (let i = 0; i < USERS; i++) judge.judge(msgs[i % QUERIES]!, scheduled[i]!, out)
const firstAfter = performance.now() - t1
const steady = run(scheduled, USERS)
let blockedSocial = 0
for (let i = 0; i < USERS; i += 97) {
  judge.judge(
    dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'www.site1.example' }] }),
    scheduled[i]!,
    out
  )
  if (judge.verdict.reason === 'schedule-category') blockedSocial++
}
console.log(
  `boundary 16:00 for ${USERS} users (${policy.schedules.size} schedules): timer ${timer.toFixed(1)} ms; first query of every user after it ${firstAfter.toFixed(0)} ms ` +
    `(${((firstAfter * 1000) / USERS).toFixed(2)} µs each, against ${steady.toFixed(2)} µs steady and ${before.toFixed(2)} µs before): ` +
    `extra ${(firstAfter - (steady * USERS) / 1000).toFixed(0)} ms spread over those queries; sampled users blocked by the schedule after it: ${blockedSocial}/${Math.ceil(USERS / 97)}`
)
console.log(
  `(node ${process.version}; load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')})`
)
policy.schedules.stop()
await store.close()
rmSync(tmp, { recursive: true, force: true })
