/**
 * The schedules one policy generation uses, each compiled once however many users share it. An entry
 * holds its state now and the states after its next boundaries, laid out ahead
 * (engine/schedule/compile.ts `timeline`). Entries are filed by their next boundary (a map from instant
 * to entries, and a min-heap of those instants), so a switch touches only the entries whose boundary
 * it is and moves each to its next precomputed state: a pointer step, no date arithmetic, no per-user
 * work (a snapshot reads its rules' `open` flags, engine/policy/scheduled.ts). Filing the stepped entries
 * under their next boundary is left to the background (see `switchDue`). An entry keeps only a few
 * states (`KEEP_STATES`); when they run low it is laid out again in the background, two boundaries before
 * they run out, a slice per event-loop turn. A query reads the clock once and compares it with the nearest
 * boundary, so a timer that fires late (a busy event loop) never lets a query see the wrong side of a
 * boundary.
 */
import { CompiledSchedule, windowMinutes, type ScheduleAt, type WindowMinutes } from './compile.js'
import type { Clock } from './clock.js'
import { MinHeap } from './heap.js'
import type { ScheduleWindow } from './types.js'

let entryCount = 0

/** One distinct schedule (zone and windows), its state now and the states after its next boundaries. */
export class ScheduleEntry {
  readonly schedule: CompiledSchedule
  /** Its number, unique for the process: a compiled rule's key names its schedule by it. */
  readonly id: number
  /** The board's next entry whose zone and windows hash alike. */
  sameHash: ScheduleEntry | undefined = undefined
  open = false
  /** Index of the open window, -1 when closed. */
  window = -1
  /** The next boundary (UTC ms). */
  next = 0
  /** When the current state began (as far as laid out). */
  since = 0
  // The laid-out states in one flat array of unboxed doubles, two numbers a state: its open window (-1
  // closed) and its end. A switch reads two numbers, and 100,000 schedules' states are 100,000 arrays
  // rather than millions of objects. Not typed arrays: two of them (each with its ArrayBuffer and an
  // off-heap store) cost three times the bytes of one plain array for a schedule's dozen states.
  private laid: number[] = []
  private index = 0

  constructor(schedule: CompiledSchedule, now: number) {
    this.schedule = schedule
    this.id = ++entryCount
    this.layOut(now)
  }

  /** Lays out the states from `now` (the date arithmetic) and takes the first. */
  layOut(now: number): void {
    const states = this.schedule.timeline(now, KEEP_STATES)
    this.keep(states)
    const first = states[0]!
    this.open = first.open
    this.window = first.window
    this.next = first.next
    this.since = first.since
  }

  /** Moves to the state holding `now` (at or past `next`): the next laid-out state, or a new layout if none is left. */
  step(now: number): void {
    while (now >= this.next) {
      const i = this.index + 1
      if (2 * i >= this.laid.length) {
        this.layOut(now)
        return
      }
      this.index = i
      this.since = this.next
      this.window = this.laid[2 * i]!
      this.open = this.window >= 0
      this.next = this.laid[2 * i + 1]!
    }
  }

  /** Boundaries laid out beyond `next`. */
  get ahead(): number {
    return this.laid.length / 2 - 1 - this.index
  }

  /** Lays the states out again from `now`, keeping the current one; false when `now` is no longer in it. */
  refill(now: number): boolean {
    if (now < this.since || now >= this.next) return false
    const states = this.schedule.timeline(now, KEEP_STATES)
    const first = states[0]
    if (first?.next !== this.next || first.open !== this.open) return false
    this.keep(states)
    return true
  }

  /** Laid-out states held (the current one included). */
  get held(): number {
    return this.laid.length / 2
  }

  private keep(states: readonly ScheduleAt[]): void {
    const laid: number[] = []
    for (const s of states) laid.push(s.open ? s.window : -1, s.next)
    // A copy of exactly its length: the pushes leave spare capacity.
    this.laid = laid.slice()
    this.index = 0
  }
}

// setTimeout's longest delay; a boundary further away re-arms when it fires.
const MAX_DELAY_MS = 2_147_483_647
/**
 * States an entry keeps of a layout, the current one included: a day and a half of a schedule with two
 * windows a day (four boundaries), two weeks of a weekly one (a layout holds fewer). A layout sees two
 * weeks ahead, 64 states of such a schedule, 1 KB an entry that 100,000 distinct schedules multiply.
 * Measured for that schedule: 8 states are 136 B and a background layout (3-5 µs, stopping at 8 states)
 * every six boundaries, 0.3 s of CPU a day for 100,000 of them; 4 states save 64 B for a layout every
 * second boundary, 16 cost 128 B more for one every 14th.
 */
const KEEP_STATES = 8
/** An entry with fewer boundaries than this laid out beyond its next is laid out again in the background. */
const AHEAD_MIN = 2
/** The background layout's share of one event-loop turn. */
const REFILL_SLICE_MS = 2
/** The background filing's share of one event-loop turn (engine/schedule/board.ts `switchDue`). */
const FILE_SLICE_MS = 2

export class ScheduleBoard {
  readonly clock: Clock
  /** Moves at every switch. */
  epoch = 0
  /** The nearest boundary of every entry. */
  next = Number.POSITIVE_INFINITY
  /** Entries switched by the last `advance` (the benchmark reports it). */
  switched = 0
  /** The latest instant a state was laid out or switched at: a clock before it has gone back. */
  private latest = Number.NEGATIVE_INFINITY
  /**
   * Entries by a hash of their zone and windows' minutes, those hashing alike chained by `sameHash`: a key
   * is a small integer, no string (a JSON key was about 200 bytes a distinct schedule).
   */
  private readonly entries = new Map<number, ScheduleEntry>()
  private count = 0
  /** Entries by their next boundary, and those boundaries, nearest first. */
  private readonly due = new Map<number, ScheduleEntry[]>()
  private readonly boundaries = new MinHeap()
  /** Entries to lay out again in the background. */
  private low: ScheduleEntry[] = []
  private timer: NodeJS.Timeout | undefined = undefined
  private refillTimer: NodeJS.Immediate | undefined = undefined
  /** Lists of entries the last switch stepped and has not yet filed, the next to file, and their nearest boundary. */
  private stepped: ScheduleEntry[][] = []
  private steppedAt = 0
  private steppedNext = Number.POSITIVE_INFINITY
  private fileTimer: NodeJS.Immediate | undefined = undefined
  private readonly onSwitch: (() => void) | undefined

  constructor(clock: Clock, onSwitch?: () => void) {
    this.clock = clock
    this.onSwitch = onSwitch
  }

  /** The entry for a zone and windows (validated), compiled on first use. */
  entry(timeZone: string, windows: readonly ScheduleWindow[]): ScheduleEntry {
    const minutes = windows.map(windowMinutes)
    const hash = hashOf(timeZone, minutes)
    const first = this.entries.get(hash)
    for (let e = first; e !== undefined; e = e.sameHash)
      if (e.schedule.timeZone === timeZone && sameWindows(e.schedule.windows, minutes)) return e
    const now = this.clock()
    const e = new ScheduleEntry(new CompiledSchedule(timeZone, windows), now)
    e.sameHash = first
    this.entries.set(hash, e)
    this.count++
    this.file(e)
    if (now > this.latest) this.latest = now
    if (e.next < this.next) {
      this.next = e.next
      this.arm(now)
    }
    return e
  }

  get size(): number {
    return this.count
  }

  /** Entries a switch stepped and the background has not yet filed under their next boundary. */
  get pendingFiles(): number {
    let n = 0
    for (const list of this.stepped) n += list.length
    return n - this.steppedAt
  }

  /** Files now what the last switch left to the background (tests and benchmarks). */
  fileNow(): void {
    this.fileStepped(Number.POSITIVE_INFINITY)
  }

  /** Entries waiting to be laid out again in the background. */
  get pendingLayouts(): number {
    return this.low.length
  }

  /** The clock now, after switching every entry whose boundary it has reached. One clock read. */
  now(): number {
    const now = this.clock()
    if (now >= this.next || now < this.latest) this.advance(now)
    return now
  }

  /** Switches the entries whose boundary `now` has reached (lays all out again when the clock went back). */
  advance(now: number): void {
    if (now < this.latest) this.layOutAll(now)
    else this.switchDue(now)
    this.latest = now
    this.next = Math.min(this.boundaries.peek(), this.steppedNext)
    this.epoch++
    this.arm(now)
    this.onSwitch?.()
  }

  /** Forgets every schedule (the policy's generation moved) and the timers. */
  clear(): void {
    this.entries.clear()
    this.count = 0
    this.due.clear()
    this.boundaries.clear()
    this.low = []
    this.stepped = []
    this.steppedAt = 0
    this.steppedNext = Number.POSITIVE_INFINITY
    this.next = Number.POSITIVE_INFINITY
    this.latest = Number.NEGATIVE_INFINITY
    this.epoch++
    this.stop()
  }

  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.refillTimer !== undefined) clearImmediate(this.refillTimer)
    this.refillTimer = undefined
    if (this.fileTimer !== undefined) clearImmediate(this.fileTimer)
    this.fileTimer = undefined
  }

  /** Lays out again, in slices, the entries that ran low (call from a test or benchmark to finish them now). */
  refillPending(sliceMs = Number.POSITIVE_INFINITY): void {
    const start = performance.now()
    const now = this.clock()
    while (this.low.length > 0 && performance.now() - start < sliceMs) {
      const e = this.low.pop()!
      // An entry whose state has ended switches (and is queued again) at its boundary.
      e.refill(now)
    }
  }

  /**
   * Steps the entries of every boundary `now` has reached: per entry a pointer step in its laid-out
   * states, nothing else. Filing each entry under its next boundary (a map and heap update per entry,
   * most of a switch's cost when 100,000 schedules are distinct) is left to the background, in slices,
   * well before that boundary: `next` already counts the stepped entries' boundaries, and a switch files
   * whatever is left first.
   */
  private switchDue(now: number): void {
    this.fileStepped(Number.POSITIVE_INFINITY)
    let n = 0
    let nearest = Number.POSITIVE_INFINITY
    while (this.boundaries.peek() <= now) {
      const at = this.boundaries.pop()
      const list = this.due.get(at)
      if (list === undefined) continue
      this.due.delete(at)
      for (let i = 0; i < list.length; i++) {
        const e = list[i]!
        e.step(now)
        if (e.next < nearest) nearest = e.next
        if (e.ahead < AHEAD_MIN) this.queueLayout(e)
      }
      this.stepped.push(list)
      n += list.length
    }
    this.steppedNext = nearest
    this.switched = n
    if (this.stepped.length > 0) this.fileTimer ??= setImmediate(this.fileLater).unref()
  }

  /** Files the entries stepped by the last switch under their next boundary, for up to `sliceMs`. */
  private fileStepped(sliceMs: number): void {
    const start = performance.now()
    let k = 0
    while (this.stepped.length > 0) {
      const list = this.stepped[this.stepped.length - 1]!
      while (this.steppedAt < list.length) {
        this.place(list[this.steppedAt++]!)
        // Reading the time costs: once every 1,024 entries.
        if ((++k & 1023) === 0 && performance.now() - start >= sliceMs) return
      }
      this.stepped.pop()
      this.steppedAt = 0
    }
    this.steppedNext = Number.POSITIVE_INFINITY
  }

  private readonly fileLater = (): void => {
    this.fileTimer = undefined
    this.fileStepped(FILE_SLICE_MS)
    if (this.stepped.length > 0) this.fileTimer = setImmediate(this.fileLater).unref()
  }

  private layOutAll(now: number): void {
    this.stepped = []
    this.steppedAt = 0
    this.steppedNext = Number.POSITIVE_INFINITY
    this.due.clear()
    this.boundaries.clear()
    this.low = []
    for (const first of this.entries.values())
      for (let e: ScheduleEntry | undefined = first; e !== undefined; e = e.sameHash) {
        e.layOut(now)
        this.file(e)
      }
    this.switched = this.count
  }

  /** Files `e` under its next boundary, and queues it for a background layout when it runs low. */
  private file(e: ScheduleEntry): void {
    this.place(e)
    if (e.ahead < AHEAD_MIN) this.queueLayout(e)
  }

  private place(e: ScheduleEntry): void {
    let list = this.due.get(e.next)
    if (list === undefined) {
      list = []
      this.due.set(e.next, list)
      this.boundaries.push(e.next)
    }
    list.push(e)
  }

  private queueLayout(e: ScheduleEntry): void {
    this.low.push(e)
    this.refillTimer ??= setImmediate(() => {
      this.refillLater()
    }).unref()
  }

  private refillLater(): void {
    this.refillTimer = undefined
    this.refillPending(REFILL_SLICE_MS)
    if (this.low.length > 0)
      this.refillTimer = setImmediate(() => {
        this.refillLater()
      }).unref()
  }

  private arm(now: number): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.next === Number.POSITIVE_INFINITY) return
    const delay = Math.min(Math.max(this.next - now, 0), MAX_DELAY_MS)
    this.timer = setTimeout(() => {
      this.timer = undefined
      const t = this.clock()
      // A test clock may not have reached the boundary when real time has: wait again.
      if (t >= this.next || t < this.latest) this.advance(t)
      else this.arm(t)
    }, delay).unref()
  }
}

/** A hash of a zone and windows, in a small integer's range (a Map key with no heap number). */
function hashOf(timeZone: string, windows: readonly WindowMinutes[]): number {
  let h = 0x811c9dc5
  for (let i = 0; i < timeZone.length; i++) h = Math.imul(h ^ timeZone.charCodeAt(i), 0x01000193)
  for (const w of windows) {
    h = Math.imul(h ^ w.days, 0x01000193)
    h = Math.imul(h ^ w.from, 0x01000193)
    h = Math.imul(h ^ w.to, 0x01000193)
  }
  return h & 0x3fffffff
}

/** Whether two lists of windows are the same, window by window (a window's index is what a query reports). */
function sameWindows(a: readonly WindowMinutes[], b: readonly WindowMinutes[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (x.days !== y.days || x.from !== y.from || x.to !== y.to) return false
  }
  return true
}
