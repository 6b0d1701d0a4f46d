/**
 * Scheduled rules in the policy (issue 27). A snapshot whose owner has scheduled rules carries a
 * `ScheduledPart`: the always-on snapshot, its rules compiled against the policy's `ScheduleBoard`, and
 * the effective snapshot (always-on sets plus the open rules' sets) for the board's current epoch. The
 * board switches at boundaries; the effective snapshot is rebuilt on the first query after a switch
 * (small set unions, once per address), so a query does no date arithmetic and pays one clock read.
 *
 * After the ordinary steps have decided on the effective snapshot, `annotate` says whether a scheduled
 * rule decided (the reason becomes `schedule-…` and the verdict names the rule and its window) and
 * when the decision may change next: the nearest boundary of any rule that touches the name, which
 * caps the answer's TTL (engine/judge, dns/).
 */
import type { SuffixKeys } from '../names/suffix-keys.js'
import type { ScheduleBoard, ScheduleEntry, ScheduledRule } from '../schedule/index.js'
import type { Reason, Snapshot, Verdict } from './index.js'

/** A rule compiled for the policy: its schedule's entry on the board and its sets. */
export interface CompiledRule {
  readonly name: string
  readonly entry: ScheduleEntry
  readonly whitelist: ReadonlySet<string>
  readonly blacklist: ReadonlySet<string>
  readonly allowOnly: boolean
  readonly filter: ReadonlySet<number>
}

/** The reasons a scheduled rule can decide with, by the ordinary reason its sets produced. */
const SCHEDULE_REASONS: Partial<Record<Reason, Reason>> = {
  'user-whitelist': 'schedule-whitelist',
  'user-blacklist': 'schedule-blacklist',
  'user-allow-only': 'schedule-allow-only',
  category: 'schedule-category'
}

/** Reasons of the steps before the user's lists: no scheduled rule can change those. */
const BEFORE_RULES: ReadonlySet<Reason> = new Set([
  'builtin-whitelist',
  'global-whitelist',
  'global-blacklist',
  'global-allow-only',
  'rpz',
  'user-disabled'
])

/** Reasons decided after the lists and before the categories: a category rule cannot change them. */
const BEFORE_CATEGORIES: ReadonlySet<Reason> = new Set([
  'user-whitelist',
  'user-blacklist',
  'user-allow-only',
  'schedule-whitelist',
  'schedule-blacklist',
  'schedule-allow-only',
  'safesearch',
  'safevideo'
])

/** Compiles `rules` against `board`; a rule without a zone takes `defaultZone` (`stats.timezone`). */
export function compileRules(
  rules: readonly ScheduledRule[] | undefined,
  board: ScheduleBoard,
  defaultZone: string
): CompiledRule[] {
  if (rules === undefined) return []
  return rules.map((r) => ({
    name: r.name,
    entry: board.entry(r.timezone ?? defaultZone, r.windows),
    whitelist: new Set(r.whitelist ?? []),
    blacklist: new Set(r.blacklist ?? []),
    allowOnly: r.allowonly === true,
    filter: new Set(r.filter ?? [])
  }))
}

function firstIn(set: ReadonlySet<string>, keys: SuffixKeys): string {
  if (set.size === 0) return ''
  for (let i = 0; i < keys.labelCount; i++) {
    const k = keys.suffix(i)
    if (set.has(k)) return k
  }
  return ''
}

export class ScheduledPart {
  readonly base: Snapshot
  readonly rules: readonly CompiledRule[]
  private epoch = -1
  private view: Snapshot
  /** Whether any rule has list entries or allow-only mode (then every name may be touched). */
  private readonly hasLists: boolean
  /** Every rule's categories: a name with none of them, and no list rule, needs no annotation. */
  private readonly anyFilter: ReadonlySet<number>

  constructor(base: Snapshot, rules: readonly CompiledRule[]) {
    this.base = base
    this.rules = rules
    this.view = base
    this.hasLists = rules.some((r) => r.allowOnly || r.whitelist.size > 0 || r.blacklist.size > 0)
    const cats = new Set<number>()
    for (const r of rules) for (const c of r.filter) cats.add(c)
    this.anyFilter = cats
  }

  /** Whether no rule can touch a name of categories `cats` (the common case: one Set lookup per category). */
  private untouched(cats: readonly number[]): boolean {
    if (this.hasLists) return false
    for (let i = 0; i < cats.length; i++) if (this.anyFilter.has(cats[i]!)) return false
    return true
  }

  /** The effective snapshot at the board's epoch (call after `board.now()`). */
  current(board: ScheduleBoard): Snapshot {
    if (this.epoch !== board.epoch) {
      this.view = this.effective()
      this.epoch = board.epoch
    }
    return this.view
  }

  private effective(): Snapshot {
    const open = this.rules.filter((r) => r.entry.open)
    if (open.length === 0) return this.base
    const b = this.base
    const union = <T>(base: ReadonlySet<T>, pick: (r: CompiledRule) => ReadonlySet<T>): ReadonlySet<T> => {
      if (open.every((r) => pick(r).size === 0)) return base
      const out = new Set(base)
      for (const r of open) for (const x of pick(r)) out.add(x)
      return out
    }
    return {
      ...b,
      whitelist: union(b.whitelist, (r) => r.whitelist),
      blacklist: union(b.blacklist, (r) => r.blacklist),
      allowOnly: b.allowOnly || open.some((r) => r.allowOnly),
      filter: union(b.filter, (r) => r.filter)
    }
  }

  /** Names the rule that decided, if one did, and sets when the decision may change next (see the module). */
  annotate(keys: SuffixKeys, out: Verdict, now: number): void {
    if (this.untouched(out.cats) || BEFORE_RULES.has(out.reason)) return
    const decider = this.decider(out)
    if (decider !== undefined) {
      out.reason = SCHEDULE_REASONS[out.reason] ?? out.reason
      out.schedule = decider.name
      out.window = decider.entry.window
    }
    const categoriesMatter = !BEFORE_CATEGORIES.has(out.reason)
    let changesAt = Number.POSITIVE_INFINITY
    let zone = ''
    for (const r of this.rules) {
      if (r.entry.next < changesAt && touches(r, keys, out, categoriesMatter)) {
        changesAt = r.entry.next
        zone = r.entry.schedule.timeZone
      }
    }
    if (changesAt === Number.POSITIVE_INFINITY) return
    out.changesAt = changesAt
    out.zone = zone
    out.ttlCap = Math.max(0, Math.floor((changesAt - now) / 1000))
  }

  /** The open rule whose set decided, or undefined when the always-on settings did. */
  private decider(out: Verdict): CompiledRule | undefined {
    const b = this.base
    switch (out.reason) {
      case 'user-whitelist':
        return b.whitelist.has(out.matched) ? undefined : this.openRule((r) => r.whitelist.has(out.matched))
      case 'user-blacklist':
        return b.blacklist.has(out.matched) ? undefined : this.openRule((r) => r.blacklist.has(out.matched))
      case 'user-allow-only':
        return b.allowOnly ? undefined : this.openRule((r) => r.allowOnly)
      case 'category':
        if (out.blockedCats.some((c) => b.filter.has(c))) return undefined
        return this.openRule((r) => out.blockedCats.some((c) => r.filter.has(c)))
      default:
        return undefined
    }
  }

  private openRule(test: (r: CompiledRule) => boolean): CompiledRule | undefined {
    for (const r of this.rules) if (r.entry.open && test(r)) return r
    return undefined
  }
}

/** Whether opening or closing `r` could change the verdict on this name. */
function touches(r: CompiledRule, keys: SuffixKeys, out: Verdict, categoriesMatter: boolean): boolean {
  if (r.allowOnly || firstIn(r.whitelist, keys) !== '' || firstIn(r.blacklist, keys) !== '') return true
  if (!categoriesMatter || r.filter.size === 0) return false
  for (const c of out.cats) if (r.filter.has(c)) return true
  return false
}
