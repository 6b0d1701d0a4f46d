/**
 * The subscribed lists as the policy reads them (engine/policy): in memory, by name, built once from
 * the store and then kept current from `sub:rev` (engine/lists/keys.ts). A generation change reads one
 * key; when the entries' revision moved by one, only the names that write changed are updated; a
 * bigger jump (a process that slept through several refreshes) reads every entry again.
 *
 * A name may be listed by several sources: each map counts how many list it with that target, so a
 * source that drops a name does not unlist it while another still has it.
 */
import { firstIn, type SuffixKeys } from '../names/index.js'
import type { Store } from '../store/index.js'
import {
  ENTRY_PREFIX,
  entryName,
  entryPrefix,
  REV_KEY,
  STATE_PREFIX,
  type EntryTarget,
  type RevRecord
} from './keys.js'

function bump(map: Map<string, number>, name: string, by: number): void {
  const n = (map.get(name) ?? 0) + by
  if (n > 0) map.set(name, n)
  else map.delete(name)
}

export class SubscriptionIndex {
  private rev = -1
  private readonly white = new Map<string, number>()
  private readonly black = new Map<string, number>()
  /** name → its categories, one element per source that lists it (so repeats are possible). */
  private readonly cats = new Map<string, number[]>()
  /** `target name` → the id of the first source listing it (sourceOf), for this revision; bounded. */
  private readonly sources = new Map<string, string>()

  /** Entries held, over every target. */
  get size(): number {
    return this.white.size + this.black.size + this.cats.size
  }

  /** Follows the store: call when its generation moved. */
  refresh(store: Store): void {
    const record = store.getSubscriptionValue(REV_KEY) as RevRecord | undefined
    const rev = record?.rev ?? 0
    if (rev === this.rev) return
    this.sources.clear()
    if (record !== undefined && this.rev >= 0 && rev === this.rev + 1) {
      for (const [name, from, to] of record.changes) {
        if (from !== null) this.count(name, from, -1)
        if (to !== null) this.count(name, to, 1)
      }
      this.rev = rev
    } else {
      this.rev = this.rebuild(store, rev)
    }
  }

  /** Reads every entry; again while a write lands meanwhile (the revision read before and after differ). */
  private rebuild(store: Store, rev: number): number {
    let before = rev
    for (;;) {
      this.white.clear()
      this.black.clear()
      this.cats.clear()
      for (const { key, value } of store.subscriptionRange(ENTRY_PREFIX))
        this.count(entryName(key), value as EntryTarget, 1)
      const after = (store.getSubscriptionValue(REV_KEY) as RevRecord | undefined)?.rev ?? 0
      if (after === before) return after
      before = after
    }
  }

  private count(name: string, target: EntryTarget, by: number): void {
    if (target === 'white') bump(this.white, name, by)
    else if (target === 'black') bump(this.black, name, by)
    else {
      const list = this.cats.get(name) ?? []
      if (by > 0) list.push(target)
      else if (list.includes(target)) list.splice(list.indexOf(target), 1)
      if (list.length > 0) this.cats.set(name, list)
      else this.cats.delete(name)
    }
  }

  /** The entries' revision (`sub:rev`) the index is at; -1 before the first refresh. */
  get revision(): number {
    return this.rev
  }

  /** The names whitelist (`white`) or blacklist (`black`) subscriptions list (the RPZ global zone). */
  names(target: 'white' | 'black'): IterableIterator<string> {
    return (target === 'white' ? this.white : this.black).keys()
  }

  /** Each category's names from category subscriptions (the RPZ category zones). */
  categoryNames(): Map<number, string[]> {
    const out = new Map<number, string[]>()
    for (const [name, cats] of this.cats) {
      for (const c of new Set(cats)) {
        const list = out.get(c)
        if (list === undefined) out.set(c, [name])
        else list.push(name)
      }
    }
    return out
  }

  /**
   * The id of a source (the first in id order) whose entry for `name` has `target`; '' when none does.
   * The index counts names, not sources: this reads the store, once per name and revision (remembered).
   */
  sourceOf(store: Store, name: string, target: EntryTarget): string {
    const key = `${target} ${name}`
    const known = this.sources.get(key)
    if (known !== undefined) return known
    let found = ''
    for (const { key: stateKey } of store.subscriptionRange(STATE_PREFIX)) {
      const id = stateKey.slice(STATE_PREFIX.length)
      if (store.getSubscriptionValue(entryPrefix(id) + name) === target) {
        found = id
        break
      }
    }
    if (this.sources.size >= 10_000) this.sources.clear()
    this.sources.set(key, found)
    return found
  }

  /**
   * The first suffix of `keys` a whitelist subscription lists, or ''. A walk through maps of up to millions
   * of names: the policy keeps its answers per name and revision (engine/policy/global-answers.ts).
   */
  firstWhite(keys: SuffixKeys): string {
    return firstIn(this.white, keys)
  }

  /** The first suffix of `keys` a blacklist subscription lists, or '' (kept as firstWhite's). */
  firstBlack(keys: SuffixKeys): string {
    return firstIn(this.black, keys)
  }

  /** The categories subscriptions give `keys` (every suffix's), with the suffix that gave the first; undefined when none. */
  categoriesOf(keys: SuffixKeys): { key: string; cats: number[] } | undefined {
    if (this.cats.size === 0) return undefined
    let found: { key: string; cats: number[] } | undefined
    for (let i = 0; i < keys.labelCount; i++) {
      const k = keys.suffix(i)
      const list = this.cats.get(k)
      if (list === undefined) continue
      if (found === undefined) found = { key: k, cats: [...list] }
      else found.cats.push(...list)
    }
    return found
  }
}
