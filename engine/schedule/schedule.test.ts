import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ScheduleBoard } from './board.js'
import { CompiledSchedule } from './compile.js'
import { parseInstant, systemClock, TEST_CLOCK_ENV } from './clock.js'
import { checkSchedules } from './validate.js'
import type { ScheduleWindow, ScheduledRule } from './types.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../testing/temp.js'

const at = (iso: string): number => Date.parse(iso)
const iso = (ms: number): string => new Date(ms).toISOString()
const SCHOOL_NIGHTS: ScheduleWindow[] = [{ days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' }]

test('a window opens at its first second and not one second before (21:59:59 / 22:00:00)', () => {
  const s = new CompiledSchedule('UTC', SCHOOL_NIGHTS)
  // 2026-11-26 is a Thursday.
  const before = s.at(at('2026-11-26T21:59:59Z'))
  assert.equal(before.open, false)
  assert.equal(iso(before.next), '2026-11-26T22:00:00.000Z')
  const on = s.at(at('2026-11-26T22:00:00Z'))
  assert.equal(on.open, true)
  assert.equal(on.window, 0)
  assert.equal(iso(on.next), '2026-11-27T07:00:00.000Z')
})

test('a window across midnight runs into the next day and ends there', () => {
  const s = new CompiledSchedule('UTC', SCHOOL_NIGHTS)
  assert.equal(s.at(at('2026-11-27T03:00:00Z')).open, true) // Friday 03:00, from Thursday's window
  assert.equal(s.at(at('2026-11-27T06:59:59Z')).open, true)
  const after = s.at(at('2026-11-27T07:00:00Z'))
  assert.equal(after.open, false)
  // Friday and Saturday nights are free: the next window is Sunday 22:00.
  assert.equal(iso(after.next), '2026-11-29T22:00:00.000Z')
  // Saturday 03:00: Friday has no window.
  assert.equal(s.at(at('2026-11-28T03:00:00Z')).open, false)
})

test('several windows a day: each opens and closes, and /check names the right one', () => {
  const s = new CompiledSchedule('UTC', [
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '07:00', to: '08:00' },
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '16:00', to: '18:00' },
    { days: ['thu'], from: '18:00', to: '19:00' }
  ])
  assert.equal(s.at(at('2026-11-26T07:30:00Z')).window, 0)
  const gap = s.at(at('2026-11-26T12:00:00Z'))
  assert.equal(gap.open, false)
  assert.equal(iso(gap.next), '2026-11-26T16:00:00.000Z')
  const second = s.at(at('2026-11-26T17:00:00Z'))
  assert.equal(second.window, 1)
  // Windows that touch count as one span: the decision changes at 19:00, not 18:00.
  assert.equal(iso(second.next), '2026-11-26T19:00:00.000Z')
  assert.equal(s.at(at('2026-11-26T18:30:00Z')).window, 2)
})

test('Europe/Berlin spring: a window starting in the skipped hour starts at the end of the gap', () => {
  // 2026-03-29 (Sunday) 02:00 CET -> 03:00 CEST, at 01:00 UTC.
  const s = new CompiledSchedule('Europe/Berlin', [{ days: ['sun'], from: '02:30', to: '04:00' }])
  const before = s.at(at('2026-03-29T00:59:59Z'))
  assert.equal(before.open, false)
  assert.equal(iso(before.next), '2026-03-29T01:00:00.000Z')
  const on = s.at(at('2026-03-29T01:00:00Z'))
  assert.equal(on.open, true)
  assert.equal(iso(on.next), '2026-03-29T02:00:00.000Z') // 04:00 CEST
})

test('Europe/Berlin autumn: a window starting in the repeated hour starts once', () => {
  // 2026-10-25 (Sunday) 03:00 CEST -> 02:00 CET at 01:00 UTC; 02:00-03:00 local happens twice.
  const s = new CompiledSchedule('Europe/Berlin', [{ days: ['sun'], from: '02:30', to: '05:00' }])
  const first = s.at(at('2026-10-25T00:30:00Z')) // the first 02:30 (CEST)
  assert.equal(first.open, true)
  assert.equal(iso(first.since), '2026-10-25T00:30:00.000Z')
  assert.equal(iso(first.next), '2026-10-25T04:00:00.000Z') // 05:00 CET
  assert.equal(s.at(at('2026-10-25T00:29:59Z')).open, false)
  // The second 02:30 (CET) is inside the same window, not a second start.
  const second = s.at(at('2026-10-25T01:30:00Z'))
  assert.equal(second.open, true)
  assert.equal(iso(second.since), '2026-10-25T00:30:00.000Z')
})

test('America/New_York spring and autumn changes', () => {
  // 2026-03-08 02:00 EST -> 03:00 EDT (07:00 UTC); 2026-11-01 02:00 EDT -> 01:00 EST (06:00 UTC).
  const spring = new CompiledSchedule('America/New_York', [{ days: ['sun'], from: '02:15', to: '02:45' }])
  // Wholly inside the gap: no window that day; the next is a week later (02:15 EDT = 06:15 UTC).
  const s1 = spring.at(at('2026-03-08T06:00:00Z'))
  assert.equal(s1.open, false)
  assert.equal(iso(s1.next), '2026-03-15T06:15:00.000Z')
  const evening = new CompiledSchedule('America/New_York', [{ days: ['sat'], from: '21:00', to: '07:00' }])
  // Saturday 21:00 EST (02:00 UTC Sunday) to Sunday 07:00 EDT (11:00 UTC): one hour shorter.
  const e1 = evening.at(at('2026-03-08T02:00:00Z'))
  assert.equal(e1.open, true)
  assert.equal(iso(e1.next), '2026-03-08T11:00:00.000Z')
  const autumn = new CompiledSchedule('America/New_York', [{ days: ['sun'], from: '01:30', to: '03:00' }])
  const a1 = autumn.at(at('2026-11-01T05:30:00Z')) // first 01:30 (EDT)
  assert.equal(a1.open, true)
  assert.equal(iso(a1.next), '2026-11-01T08:00:00.000Z') // 03:00 EST
  assert.equal(autumn.at(at('2026-11-01T05:29:59Z')).open, false)
  assert.equal(autumn.at(at('2026-11-01T06:30:00Z')).since, at('2026-11-01T05:30:00Z'))
})

test('a user in another time zone than the server: the rule zone decides, not the process', () => {
  const tokyo = new CompiledSchedule('Asia/Tokyo', [{ days: ['fri'], from: '07:00', to: '08:00' }])
  // Friday 07:00 in Tokyo is Thursday 22:00 UTC (and whatever TZ this process has).
  assert.equal(tokyo.at(at('2026-11-26T21:59:59Z')).open, false)
  assert.equal(tokyo.at(at('2026-11-26T22:00:00Z')).open, true)
  const berlin = new CompiledSchedule('Europe/Berlin', [{ days: ['fri'], from: '07:00', to: '08:00' }])
  assert.equal(berlin.at(at('2026-11-26T22:00:00Z')).open, false)
  assert.equal(iso(berlin.at(at('2026-11-26T22:00:00Z')).next), '2026-11-27T06:00:00.000Z')
})

test('a window across Sunday midnight wraps to Monday', () => {
  const s = new CompiledSchedule('UTC', [{ days: ['sun'], from: '23:00', to: '01:00' }])
  assert.equal(s.at(at('2026-11-30T00:30:00Z')).open, true) // Monday 00:30
  assert.equal(iso(s.at(at('2026-11-30T00:30:00Z')).next), '2026-11-30T01:00:00.000Z')
})

const rule = (over: Partial<ScheduledRule>): ScheduledRule => ({
  name: 'r',
  windows: [{ days: ['mon'], from: '10:00', to: '11:00' }],
  ...over
})
const known = (c: number): boolean => c >= 1 && c <= 60

test('validation names the field: unknown zone, 25:00, empty or overlapping windows, unknown category', () => {
  const field = (rules: ScheduledRule[]): string | undefined => checkSchedules(rules, 'schedules', known)?.field
  assert.equal(field([rule({})]), undefined)
  assert.equal(field([rule({ timezone: 'Mars/Olympus' })]), 'schedules[0].timezone')
  assert.equal(
    field([rule({ windows: [{ days: ['mon'], from: '25:00', to: '26:00' }] })]),
    'schedules[0].windows[0].from'
  )
  assert.equal(
    field([rule({ windows: [{ days: ['mon'], from: '10:00', to: '24:01' }] })]),
    'schedules[0].windows[0].to'
  )
  assert.equal(field([rule({ windows: [] })]), 'schedules[0].windows')
  assert.equal(
    field([rule({ windows: [{ days: ['mon'], from: '10:00', to: '10:00' }] })]),
    'schedules[0].windows[0].to'
  )
  const overlapping = [
    { days: ['mon' as const], from: '10:00', to: '12:00' },
    { days: ['mon' as const], from: '11:00', to: '13:00' }
  ]
  assert.equal(field([rule({ windows: overlapping })]), 'schedules[0].windows[1]')
  // Across Sunday midnight into a Monday window.
  const wrap = [
    { days: ['sun' as const], from: '23:00', to: '02:00' },
    { days: ['mon' as const], from: '01:00', to: '03:00' }
  ]
  assert.equal(field([rule({ windows: wrap })]), 'schedules[0].windows[1]')
  const touching = [
    { days: ['mon' as const], from: '10:00', to: '12:00' },
    { days: ['mon' as const], from: '12:00', to: '13:00' }
  ]
  assert.equal(field([rule({ windows: touching })]), undefined)
  const p = checkSchedules([rule({ filter: [40, 99] })], 'schedules', known)
  assert.deepEqual(p, {
    kind: 'unknown-category',
    field: 'schedules[0].filter[1]',
    message: 'schedules[0].filter[1]: unknown category 99'
  })
  assert.equal(field([rule({}), rule({})]), 'schedules[1].name')
})

test('the board switches at the boundary with an injected clock, and recomputes when the clock goes back', () => {
  let now = at('2026-11-26T21:59:59Z')
  const board = new ScheduleBoard(() => now)
  const e = board.entry('UTC', SCHOOL_NIGHTS)
  const same = board.entry('UTC', SCHOOL_NIGHTS)
  assert.equal(e, same, 'one entry per distinct schedule')
  assert.equal(board.size, 1)
  assert.equal(e.open, false)
  const epoch = board.epoch
  board.now()
  assert.equal(board.epoch, epoch, 'no switch before the boundary')
  now = at('2026-11-26T22:00:00Z')
  board.now()
  assert.equal(e.open, true)
  assert.ok(board.epoch > epoch)
  now = at('2026-11-26T12:00:00Z')
  board.now()
  assert.equal(e.open, false)
  board.clear()
})

test('the test clock file sets the instant; without the variable the clock is Date.now', (t) => {
  assert.equal(systemClock({}), Date.now)
  const file = join(tempDir(t), 'now')
  writeFileSync(file, '2026-11-26T22:00:00Z\n')
  const clock = systemClock({ [TEST_CLOCK_ENV]: file })
  assert.equal(clock(), at('2026-11-26T22:00:00Z'))
  writeFileSync(file, String(at('2026-01-01T00:00:00Z')))
  assert.equal(clock(), at('2026-01-01T00:00:00Z'))
  assert.ok(Number.isNaN(parseInstant('tomorrow')))
})
