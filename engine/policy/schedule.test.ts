// Scheduled rules in the policy: each kind of rule opens and closes at its boundary with an
// injected clock, the verdict names the rule and caps the TTL, and a switch costs no store read.
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../categories/index.js'
import { CategoryDb } from '../catdb/index.js'
import type { ScheduledRule } from '../schedule/index.js'
import type { Store } from '../store/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from './index.js'

const at = (iso: string): number => Date.parse(iso)
// 2026-11-26 is a Thursday.
const THU_2159 = at('2026-11-26T21:59:59Z')
const THU_2200 = at('2026-11-26T22:00:00Z')
const SCHOOL_NIGHTS: ScheduledRule = {
  name: 'school nights',
  timezone: 'UTC',
  windows: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' }],
  filter: [CATEGORY.SOCIAL_NETWORKS, CATEGORY.GAMBLING]
}

async function fixture(t: TestContext, setup: (s: Store) => Promise<void>, timeZone = 'UTC') {
  const { store } = tempStore(t, 'filterd-sched-')
  await buildCats(store, {
    'casino.example': [CATEGORY.GAMBLING],
    'social.example': [CATEGORY.SOCIAL_NETWORKS],
    'school.example': [CATEGORY.SEARCH_ENGINES]
  })
  await setup(store)
  const clock = { now: THU_2159 }
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    clock: () => clock.now,
    timeZone
  })
  t.after(() => {
    policy.schedules.stop()
  })
  const judge = (address: string, name: string): Verdict => policy.evaluate(address, new HostKeys(name), new Verdict())
  return { store, policy, clock, judge }
}

test('scheduled categories block inside the window only, named, with the TTL ending at the boundary', async (t: TestContext) => {
  const f = await fixture(t, (s) => addUser(s, { name: 'kid', ip: ['10.0.0.1'], schedules: [SCHOOL_NIGHTS] }))
  const before = f.judge('10.0.0.1', 'social.example')
  t.assert.deepStrictEqual([before.action, before.reason, before.ttlCap], ['forward', 'none', 1])
  t.assert.strictEqual(before.changesAt, THU_2200)
  f.clock.now = THU_2200
  const inside = f.judge('10.0.0.1', 'social.example')
  t.assert.deepStrictEqual(
    [inside.action, inside.reason, inside.schedule, inside.window],
    ['block', 'schedule-category', 'school nights', 0]
  )
  t.assert.deepStrictEqual(inside.blockedCats, [CATEGORY.SOCIAL_NETWORKS])
  t.assert.strictEqual(inside.changesAt, at('2026-11-27T07:00:00Z'))
  t.assert.strictEqual(inside.ttlCap, 9 * 3600)
  // A name no rule touches is not capped.
  const school = f.judge('10.0.0.1', 'school.example')
  t.assert.deepStrictEqual([school.action, school.ttlCap, school.changesAt], ['forward', -1, 0])
  f.clock.now = at('2026-11-27T07:00:00Z')
  t.assert.strictEqual(f.judge('10.0.0.1', 'casino.example').action, 'forward')
})

test('a category blocked always stays an ordinary category block inside a window', async (t: TestContext) => {
  const f = await fixture(t, (s) =>
    addUser(s, { name: 'kid', ip: ['10.0.0.1'], filter: [CATEGORY.GAMBLING], schedules: [SCHOOL_NIGHTS] })
  )
  f.clock.now = THU_2200
  const v = f.judge('10.0.0.1', 'casino.example')
  t.assert.deepStrictEqual([v.action, v.reason, v.schedule], ['block', 'category', ''])
})

test('allow-only mode Mon-Fri 16:00-18:00 and a name whitelisted Sat 10:00-12:00 in another zone', async (t: TestContext) => {
  const homework: ScheduledRule = {
    name: 'homework',
    windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '16:00', to: '18:00' }],
    whitelist: ['school.example'],
    allowonly: true
  }
  const saturday: ScheduledRule = {
    name: 'saturday games',
    timezone: 'America/New_York',
    windows: [{ days: ['sat'], from: '10:00', to: '12:00' }],
    whitelist: ['casino.example']
  }
  const f = await fixture(
    t,
    (s) =>
      addUser(s, { name: 'kid', ip: ['10.0.0.2'], schedules: [homework, saturday] }, { black: ['casino.example'] }),
    'Europe/Berlin'
  )
  // Thursday 16:00 in Berlin (the default zone) is 15:00 UTC.
  f.clock.now = at('2026-11-26T14:59:59Z')
  t.assert.strictEqual(f.judge('10.0.0.2', 'social.example').action, 'forward')
  f.clock.now = at('2026-11-26T15:00:00Z')
  const v = f.judge('10.0.0.2', 'social.example')
  t.assert.deepStrictEqual([v.action, v.reason, v.schedule], ['block', 'schedule-allow-only', 'homework'])
  t.assert.strictEqual(v.changesAt, at('2026-11-26T17:00:00Z'))
  t.assert.strictEqual(f.judge('10.0.0.2', 'www.school.example').action, 'forward')
  // Saturday 10:00 in New York is 15:00 UTC: the blacklisted name is whitelisted for two hours.
  f.clock.now = at('2026-11-28T14:59:59Z')
  t.assert.strictEqual(f.judge('10.0.0.2', 'casino.example').reason, 'user-blacklist')
  f.clock.now = at('2026-11-28T15:00:00Z')
  const w = f.judge('10.0.0.2', 'casino.example')
  t.assert.deepStrictEqual(
    [w.action, w.reason, w.schedule, w.zone],
    ['forward', 'schedule-whitelist', 'saturday games', 'America/New_York']
  )
  t.assert.strictEqual(w.ttlCap, 7200)
})

test('the anonymous defaults and the new-user default carry schedules', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await s.write((w) => {
      w.putServerDefaults({ ...s.getServerDefaults(), schedules: [SCHOOL_NIGHTS] })
      w.putUserDefaults({ ...s.getUserDefaults(), schedules: [{ ...SCHOOL_NIGHTS, name: 'new users' }] })
    })
    await addUser(s, { name: 'fresh', ip: ['10.0.0.3'] })
  })
  f.clock.now = THU_2200
  t.assert.strictEqual(f.judge('192.0.2.1', 'casino.example').reason, 'schedule-category')
  const v = f.judge('10.0.0.3', 'casino.example')
  t.assert.deepStrictEqual([v.reason, v.schedule], ['schedule-category', 'new users'])
})

test('users sharing a schedule share one compiled entry and rule; a switch reads nothing from the store', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    for (let i = 1; i <= 20; i++) await addUser(s, { name: `u${i}`, ip: [`10.1.0.${i}`], schedules: [SCHOOL_NIGHTS] })
  })
  for (let i = 1; i <= 20; i++) f.judge(`10.1.0.${i}`, 'casino.example')
  t.assert.strictEqual(f.policy.schedules.size, 1)
  // The compiled rules are shared too: a switch has nothing per user to redo.
  const part = f.policy.snapshotFor('10.1.0.1').policy.scheduled
  t.assert.ok(part !== undefined)
  t.assert.strictEqual(f.policy.snapshotFor('10.1.0.20').policy.scheduled, part)
  const reads = { n: 0 }
  const getUser = f.store.getUser.bind(f.store)
  f.store.getUser = (id: string) => {
    reads.n++
    return getUser(id)
  }
  f.clock.now = THU_2200
  for (let i = 1; i <= 20; i++) t.assert.strictEqual(f.judge(`10.1.0.${i}`, 'casino.example').action, 'block')
  t.assert.strictEqual(reads.n, 0)
})

test('users with schedules of their own: every one switches at its boundary, also before the background filing', async (t: TestContext) => {
  const pad = (n: number): string => String(n).padStart(2, '0')
  // 90 users, each closing at its own minute from 22:01 (the switch at 22:00 steps 90 distinct schedules).
  const rule = (i: number): ScheduledRule => ({
    ...SCHOOL_NIGHTS,
    windows: [{ days: ['thu'], from: '22:00', to: `${22 + Math.floor((i + 1) / 60)}:${pad((i + 1) % 60)}` }]
  })
  const f = await fixture(t, async (s) => {
    for (let i = 0; i < 90; i++) await addUser(s, { name: `kid${i}`, ip: [`10.0.1.${i}`], schedules: [rule(i)] })
  })
  const actions = (): string =>
    Array.from({ length: 90 }, (_, i) => f.judge(`10.0.1.${i}`, 'social.example').action[0]).join('')
  t.assert.strictEqual(actions(), 'f'.repeat(90))
  t.assert.strictEqual(f.policy.schedules.size, 90)
  f.clock.now = THU_2200
  t.assert.strictEqual(actions(), 'b'.repeat(90), 'every user blocked at 22:00:00')
  // No event-loop turn since the switch: its schedules are not filed yet, and 22:01 and 22:02 still switch.
  t.assert.ok(f.policy.schedules.pendingFiles > 0)
  f.clock.now = at('2026-11-26T22:01:00Z')
  t.assert.strictEqual(actions(), 'f' + 'b'.repeat(89))
  f.clock.now = at('2026-11-26T22:02:00Z') - 1
  t.assert.strictEqual(actions(), 'f' + 'b'.repeat(89), 'not a millisecond early')
  f.clock.now = at('2026-11-26T22:02:00Z')
  t.assert.strictEqual(actions(), 'ff' + 'b'.repeat(88))
  f.clock.now = at('2026-11-26T23:30:00Z')
  t.assert.strictEqual(actions(), 'f'.repeat(90))
})
