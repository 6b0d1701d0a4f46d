/**
 * Scheduled rules in the policy. A snapshot whose owner has scheduled rules carries a
 * `ScheduledPart`: its rules, compiled against the policy's `ScheduleBoard`. The part is not a second
 * copy of the owner's lists: the policy's steps check the always-on sets first and then the sets of the
 * rules whose schedule is open now, a field the board keeps current (`entry.open`). A boundary therefore
 * changes nothing per user: the board steps each schedule to its precomputed next state and every
 * snapshot using it sees the new state on its next query, with no rebuild and no date arithmetic. Rules
 * and parts with the same content are shared by every user who has them.
 *
 * After the steps, `annotate` says when the decision may change next: the nearest boundary of any rule
 * that touches the name, which caps the answer's TTL (engine/judge, dns/).
 */
import { firstIn, type SuffixKeys } from '../names/index.js'
import { flatString, type ScheduleBoard, type ScheduleEntry, type ScheduledRule } from '../schedule/index.js'
import type { Reason, Verdict } from './index.js'
import { NO_NAMES } from './shared-policy.js'

/** A rule compiled for the policy: its schedule's entry on the board and its sets. Shared, immutable. */
export interface CompiledRule {
  /** Its number in the compiler that made it (a part's key is its rules' numbers). */
  readonly id: number
  readonly name: string
  readonly entry: ScheduleEntry
  readonly whitelist: ReadonlySet<string>
  readonly blacklist: ReadonlySet<string>
  readonly allowOnly: boolean
  readonly filter: ReadonlySet<number>
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

const NO_CATEGORIES: ReadonlySet<number> = new Set()

/**
 * Compiles rules against a board, sharing equal rules and equal rule lists between users (keyed by
 * content, so they stay right across writes; drop it with the board's `clear`).
 */
export class RuleCompiler {
  private readonly board: ScheduleBoard
  /** Compiled rules by content. */
  private readonly rules = new Map<string, CompiledRule>()
  /** Parts by their rules' numbers: the number itself for one rule (no string), else the list. */
  private readonly parts = new Map<number | string, ScheduledPart>()
  /** Rules' category Sets by content: most users' rules block the same few categories. */
  private readonly filters = new Map<string, ReadonlySet<number>>()

  constructor(board: ScheduleBoard) {
    this.board = board
  }

  /** The part for `rules` (none when empty); a rule without a zone takes `defaultZone` (`stats.timezone`). */
  part(rules: readonly ScheduledRule[] | undefined, defaultZone: string): ScheduledPart | undefined {
    if (rules === undefined || rules.length === 0) return undefined
    // Keyed by the compiled rules' numbers, not the rules' text again: a user with a schedule of its own
    // would otherwise hold its rules' JSON twice.
    const compiled = rules.map((r) => this.rule(r, defaultZone))
    const key = compiled.length === 1 ? compiled[0]!.id : compiled.map((c) => c.id).join(',')
    let part = this.parts.get(key)
    if (part === undefined) {
      part = new ScheduledPart(compiled)
      this.parts.set(key, part)
    }
    return part
  }

  clear(): void {
    this.rules.clear()
    this.parts.clear()
    this.filters.clear()
  }

  private rule(r: ScheduledRule, defaultZone: string): CompiledRule {
    // The schedule by its entry's number, not its text: the board has it by zone and windows already.
    const entry = this.board.entry(r.timezone ?? defaultZone, r.windows)
    const key = JSON.stringify([entry.id, r.name, r.filter, r.whitelist, r.blacklist, r.allowonly === true])
    let c = this.rules.get(key)
    if (c === undefined) {
      c = {
        id: this.rules.size + 1,
        name: r.name,
        entry,
        whitelist: this.names(r.whitelist),
        blacklist: this.names(r.blacklist),
        allowOnly: r.allowonly === true,
        filter: this.categories(r.filter)
      }
      // Stored flat: JSON.stringify's result is a rope of its parts (engine/schedule/flat-string.ts).
      this.rules.set(flatString(key), c)
    }
    return c
  }

  /**
   * A rule's names as a Set, the one empty Set when none (most rules have only categories). Lists are not
   * interned: their key would be a second copy of every name.
   */
  private names(list: readonly string[] | undefined): ReadonlySet<string> {
    return list === undefined || list.length === 0 ? NO_NAMES : new Set(list)
  }

  /** A rule's categories as a Set, shared with every rule blocking the same ones. */
  private categories(list: readonly number[] | undefined): ReadonlySet<number> {
    if (list === undefined || list.length === 0) return NO_CATEGORIES
    const key = [...new Set(list)].sort((a, b) => a - b).join(',')
    let set = this.filters.get(key)
    if (set === undefined) this.filters.set(key, (set = new Set(list)))
    return set
  }
}

/** Records that open rule `r` decided. */
function decided(out: Verdict, r: CompiledRule, action: Verdict['action'], reason: Reason, matched: string): true {
  out.action = action
  out.reason = reason
  out.matched = matched
  out.schedule = r.name
  out.window = r.entry.window
  return true
}

export class ScheduledPart {
  readonly rules: readonly CompiledRule[]
  /** Whether any rule has list entries or allow-only mode (then every name may be touched). */
  private readonly hasLists: boolean
  /** Every rule's categories: a name with none of them, and no list rule, needs no annotation. */
  private readonly anyFilter: ReadonlySet<number>
  /**
   * The open state below, as of the board's `epoch` (moved by every switch): a query's `sync` is one
   * comparison, and the first query after a switch recomputes it from the rules' `open` flags (no date
   * arithmetic, and no allocation unless two open rules block categories).
   */
  private epoch = -1
  /** Categories the open rules block: the category step reads it like the always-on filter. */
  openFilter: ReadonlySet<number> = NO_CATEGORIES
  /** Whether an open rule has list entries or allow-only mode (else the list steps skip the part). */
  listsOpen = false

  constructor(rules: readonly CompiledRule[]) {
    this.rules = rules
    this.hasLists = rules.some((r) => r.allowOnly || r.whitelist.size > 0 || r.blacklist.size > 0)
    // One rule (the usual case): its own Set, not a copy.
    if (rules.length === 1) this.anyFilter = rules[0]!.filter
    else {
      const cats = new Set<number>()
      for (const r of rules) for (const c of r.filter) cats.add(c)
      this.anyFilter = cats
    }
  }

  /** Brings the open state to the board's `epoch`. */
  sync(epoch: number): void {
    if (epoch !== this.epoch) this.recompute(epoch)
  }

  private recompute(epoch: number): void {
    this.epoch = epoch
    let filter = NO_CATEGORIES
    let lists = false
    for (const r of this.rules) {
      if (!r.entry.open) continue
      if (r.allowOnly || r.whitelist.size > 0 || r.blacklist.size > 0) lists = true
      if (r.filter.size === 0) continue
      filter = filter.size === 0 ? r.filter : new Set([...filter, ...r.filter])
    }
    this.openFilter = filter
    this.listsOpen = lists
  }

  /** Step 4 for the open rules: a whitelisted name is forwarded. */
  white(keys: SuffixKeys, out: Verdict): boolean {
    if (!this.listsOpen) return false
    for (const r of this.rules) {
      if (!r.entry.open) continue
      const hit = firstIn(r.whitelist, keys)
      if (hit !== '') return decided(out, r, 'forward', 'schedule-whitelist', hit)
    }
    return false
  }

  /** Step 5 for the open rules: a blacklisted name is blocked. */
  black(keys: SuffixKeys, out: Verdict): boolean {
    if (!this.listsOpen) return false
    for (const r of this.rules) {
      if (!r.entry.open) continue
      const hit = firstIn(r.blacklist, keys)
      if (hit !== '') return decided(out, r, 'block', 'schedule-blacklist', hit)
    }
    return false
  }

  /** Allow-only mode of an open rule. */
  allowOnly(out: Verdict): boolean {
    if (!this.listsOpen) return false
    for (const r of this.rules)
      if (r.entry.open && r.allowOnly) return decided(out, r, 'block', 'schedule-allow-only', '-')
    return false
  }

  /** After a category block: names the open rule that decided, unless an always-on category did. */
  nameCategoryRule(out: Verdict, always: ReadonlySet<number>): void {
    const blocked = out.blockedCats
    for (const c of blocked) if (always.has(c)) return
    for (const r of this.rules) {
      if (!r.entry.open) continue
      for (const c of blocked)
        if (r.filter.has(c)) return void decided(out, r, 'block', 'schedule-category', out.matched)
    }
  }

  /** Whether no rule can touch a name of categories `cats` (the common case: one Set lookup per category). */
  private untouched(cats: readonly number[]): boolean {
    if (this.hasLists) return false
    for (let i = 0; i < cats.length; i++) if (this.anyFilter.has(cats[i]!)) return false
    return true
  }

  /** Sets when the decision may change next (see the module). */
  annotate(keys: SuffixKeys, out: Verdict, now: number): void {
    if (this.untouched(out.cats) || BEFORE_RULES.has(out.reason)) return
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
}

/** Whether opening or closing `r` could change the verdict on this name. */
function touches(r: CompiledRule, keys: SuffixKeys, out: Verdict, categoriesMatter: boolean): boolean {
  if (r.allowOnly || firstIn(r.whitelist, keys) !== '' || firstIn(r.blacklist, keys) !== '') return true
  if (!categoriesMatter || r.filter.size === 0) return false
  for (const c of out.cats) if (r.filter.has(c)) return true
  return false
}
