// The board's switch: a boundary steps each schedule to its precomputed
// next state, touches only the schedules whose boundary it is, and the states it steps through are the
// ones `at()` computes from scratch, across daylight-saving changes and background re-layouts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as turn } from 'node:timers/promises'
import { ScheduleBoard, type ScheduleEntry } from './board.js'
import { MinHeap } from './heap.js'
import type { ScheduleWindow } from './types.js'

const at = (iso: string): number => Date.parse(iso)
const WEEKDAYS: ScheduleWindow['days'] = ['mon', 'tue', 'wed', 'thu', 'fri']
const SCHEDULES: Array<[string, ScheduleWindow[]]> = [
  ['UTC', [{ days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' }]],
  [
    'Europe/Berlin',
    [
      { days: ['sun'], from: '02:30', to: '04:00' },
      { days: WEEKDAYS, from: '16:00', to: '18:00' }
    ]
  ],
  ['America/New_York', [{ days: ['sun'], from: '01:30', to: '03:00' }]],
  ['Asia/Kolkata', [{ days: ['sat'], from: '23:30', to: '24:00' }]]
]

/** Counts the date arithmetic (`timeline` layouts) each entry does: in all, and entry by entry. */
function countLayouts(entries: ScheduleEntry[]): { n: number; of: number[] } {
  const count = { n: 0, of: entries.map(() => 0) }
  entries.forEach((e, i) => {
    const s = e.schedule
    const timeline = s.timeline.bind(s)
    s.timeline = (now: number, limit?: number) => {
      count.n++
      count.of[i]!++
      return timeline(now, limit)
    }
  })
  return count
}

test('the min-heap pops its values in order', () => {
  const h = new MinHeap()
  const values = [5, 3, 9, 1, 1, 7, 2, 8, 6, 4, 0]
  for (const v of values) h.push(v)
  const out: number[] = []
  while (h.size > 0) out.push(h.pop())
  assert.deepEqual(
    out,
    [...values].sort((a, b) => a - b)
  )
  assert.equal(h.peek(), Number.POSITIVE_INFINITY)
})

test('a boundary steps only the schedules it belongs to, to their precomputed state, with no date arithmetic', () => {
  let now = at('2026-11-26T15:59:59Z') // a Thursday
  const board = new ScheduleBoard(() => now)
  const afternoon = board.entry('UTC', [{ days: WEEKDAYS, from: '16:00', to: '17:00' }])
  const evening = board.entry('UTC', [{ days: WEEKDAYS, from: '20:00', to: '21:00' }])
  const layouts = countLayouts([afternoon, evening])
  const eveningNext = evening.next
  now = at('2026-11-26T16:00:00Z')
  board.now()
  assert.equal(afternoon.open, true)
  assert.equal(afternoon.next, at('2026-11-26T17:00:00Z'))
  assert.equal(board.switched, 1, 'only the schedule whose boundary it is')
  assert.equal(evening.next, eveningNext)
  assert.equal(layouts.n, 0, 'the switch laid nothing out')
  now = at('2026-11-26T20:00:00Z') // passes 17:00 too
  board.now()
  assert.deepEqual([afternoon.open, evening.open, board.switched], [false, true, 2])
  assert.equal(board.next, at('2026-11-26T21:00:00Z'))
  assert.equal(layouts.n, 0)
  board.clear()
})

for (const background of [true, false]) {
  test(`two months of boundaries step through the states at() computes (background layouts ${background ? 'on' : 'off'})`, async () => {
    let now = at('2026-03-01T00:00:00Z')
    const board = new ScheduleBoard(() => now)
    const entries = SCHEDULES.map(([zone, windows]) => board.entry(zone, windows))
    const layouts = countLayouts(entries)
    const boundaries = entries.map(() => 0)
    let switches = 0
    // Through the spring changes of New York (03-08) and Berlin (03-29), to the end of April.
    while (board.next < at('2026-05-01T00:00:00Z')) {
      if (background) await turn()
      now = board.next
      const nexts = entries.map((e) => e.next)
      const laidBefore = layouts.n
      board.now()
      if (background) assert.equal(layouts.n, laidBefore, 'the background laid out every entry before it ran out')
      entries.forEach((e, i) => {
        if (e.next !== nexts[i]) boundaries[i]!++
      })
      switches++
      for (const e of entries) {
        const fresh = e.schedule.at(now)
        assert.deepEqual(
          [e.open, e.window, e.next],
          [fresh.open, fresh.window, fresh.next],
          `${e.schedule.timeZone} at ${new Date(now).toISOString()}`
        )
      }
    }
    assert.ok(switches > 60, `${switches} switches`)
    // Each entry was laid out again every few of its boundaries (an entry keeps a few states: every six
    // for the two with boundaries most days, every second for the weekly ones), in the background when
    // allowed, else at a switch.
    assert.ok(layouts.n > 0 && layouts.n < switches, `${layouts.n} layouts for ${switches} switches`)
    entries.forEach((e, i) => {
      const [laid, passed] = [layouts.of[i]!, boundaries[i]!]
      assert.ok(laid > 0 && 2 * laid <= passed + 2, `${e.schedule.timeZone}: ${laid} layouts for ${passed} boundaries`)
    })
    board.clear()
  })
}

test('an entry keeps at most 8 states and still switches exactly at each boundary, laid out in the background', async () => {
  let now = at('2026-11-30T00:00:00Z') // a Monday
  const board = new ScheduleBoard(() => now)
  // Four boundaries a day: a layout of two weeks holds 64 states.
  const days: ScheduleWindow['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
  const daily = board.entry('UTC', [
    { days, from: '06:00', to: '08:00' },
    { days, from: '18:00', to: '21:30' }
  ])
  assert.ok(daily.held <= 8, `${daily.held} states held`)
  const layouts = countLayouts([daily])
  const inSwitch = { n: 0 }
  let boundaries = 0
  // Five days: 20 boundaries, more than twice the states an entry keeps.
  while (daily.next < at('2026-12-05T00:00:00Z')) {
    await turn()
    await turn()
    const boundary = daily.next
    const was = [daily.open, daily.window]
    now = boundary - 1
    board.now()
    assert.deepEqual([daily.open, daily.window, daily.next], [...was, boundary], 'a millisecond before, unchanged')
    now = boundary
    const laidBefore = layouts.n
    board.now()
    inSwitch.n += layouts.n - laidBefore
    const fresh = daily.schedule.at(now)
    assert.deepEqual(
      [daily.open, daily.window, daily.next],
      [fresh.open, fresh.window, fresh.next],
      new Date(now).toISOString()
    )
    assert.notEqual(daily.open, was[0], 'switched at the boundary')
    assert.ok(daily.held <= 8, `${daily.held} states held`)
    boundaries++
  }
  assert.equal(boundaries, 20)
  assert.equal(inSwitch.n, 0, 'no switch laid anything out')
  assert.ok(layouts.n >= 2, `${layouts.n} background layouts`)
  board.clear()
})

test('an entry is found by its zone and windows in minutes: another spelling shares it, a hash alike does not', () => {
  const board = new ScheduleBoard(() => at('2026-11-26T12:00:00Z'))
  const late = board.entry('UTC', [{ days: ['tue', 'mon'], from: '22:00', to: '00:00' }])
  assert.equal(board.entry('UTC', [{ days: ['mon', 'tue'], from: '22:00', to: '24:00' }]), late)
  assert.notEqual(board.entry('Europe/London', [{ days: ['mon', 'tue'], from: '22:00', to: '24:00' }]), late)
  // These two hash alike (found by a search over windows): each has its own entry and is found again.
  const a: ScheduleWindow[] = [{ days: ['mon', 'tue', 'fri'], from: '23:30', to: '01:30' }]
  const b: ScheduleWindow[] = [{ days: ['mon', 'thu', 'fri', 'sat', 'sun'], from: '01:15', to: '02:15' }]
  const [ea, eb] = [board.entry('UTC', a), board.entry('UTC', b)]
  assert.notEqual(ea, eb)
  assert.deepEqual([board.entry('UTC', a), board.entry('UTC', b), board.size], [ea, eb, 4])
  assert.deepEqual([ea.schedule.windows[0]!.from, eb.schedule.windows[0]!.from], [23 * 60 + 30, 75])
  board.clear()
})

test('a background layout runs between event-loop turns, not in the switch', async () => {
  let now = at('2026-11-26T15:59:59Z')
  const board = new ScheduleBoard(() => now)
  // A weekly window: two weeks laid out hold four boundaries, so the third switch leaves it low.
  const weekly = board.entry('UTC', [{ days: ['thu'], from: '16:00', to: '17:00' }])
  const layouts = countLayouts([weekly])
  for (const t of ['2026-11-26T16:00:00Z', '2026-11-26T17:00:00Z', '2026-12-03T16:00:00Z']) {
    await turn()
    now = at(t)
    board.now()
  }
  assert.equal(layouts.n, 0, 'no layout inside the switches')
  assert.equal(board.pendingLayouts, 1)
  await turn()
  await turn()
  assert.equal(board.pendingLayouts, 0)
  assert.equal(layouts.n, 1)
  assert.deepEqual([weekly.open, weekly.next], [true, at('2026-12-03T17:00:00Z')])
  now = at('2026-12-03T17:00:00Z')
  board.now()
  assert.deepEqual([weekly.open, weekly.next, layouts.n], [false, at('2026-12-10T16:00:00Z'), 1])
  board.clear()
})

test('a switch steps its schedules and files them later; a boundary before the filing still switches', () => {
  let now = at('2026-11-26T15:59:59Z') // a Thursday
  const board = new ScheduleBoard(() => now)
  // 120 distinct schedules, all opening at 16:00 and closing one minute apart from 16:01.
  const entries = Array.from({ length: 120 }, (_, i) =>
    board.entry('UTC', [
      { days: WEEKDAYS, from: '16:00', to: `${16 + Math.floor((i + 1) / 60)}:${String((i + 1) % 60).padStart(2, '0')}` }
    ])
  )
  now = at('2026-11-26T16:00:00Z')
  board.now()
  assert.equal(board.switched, 120)
  assert.ok(entries.every((e) => e.open))
  assert.equal(board.pendingFiles, 120, 'filed in the background, not in the switch')
  assert.equal(board.next, at('2026-11-26T16:01:00Z'), 'the nearest boundary counts the unfiled schedules')
  // No event-loop turn: the 16:01 boundary comes before the background filing ran.
  now = at('2026-11-26T16:01:00Z')
  board.now()
  assert.equal(board.pendingFiles, 1, 'the 119 filed first; the one it stepped waits')
  assert.deepEqual(
    entries.slice(0, 2).map((e) => e.open),
    [false, true]
  )
  assert.equal(board.next, at('2026-11-26T16:02:00Z'))
  now = at('2026-11-26T18:00:00Z')
  board.now()
  assert.ok(entries.every((e) => !e.open))
  board.clear()
})

test('the background files a switch in slices, between event-loop turns', async () => {
  let now = at('2026-11-26T15:59:59Z')
  const board = new ScheduleBoard(() => now)
  for (let i = 0; i < 3000; i++)
    board.entry('UTC', [
      { days: WEEKDAYS, from: '16:00', to: `${17 + (Math.floor(i / 60) % 4)}:${String(i % 60).padStart(2, '0')}` }
    ])
  now = at('2026-11-26T16:00:00Z')
  board.now()
  assert.ok(board.size > 200)
  assert.equal(board.switched, board.size)
  assert.equal(board.pendingFiles, board.size)
  for (let i = 0; i < 1000 && board.pendingFiles > 0; i++) await turn()
  assert.equal(board.pendingFiles, 0)
  board.clear()
})
