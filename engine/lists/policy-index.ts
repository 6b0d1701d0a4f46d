/**
 * The subscribed lists as the policy reads them (engine/policy): the entries stay in the store, one copy
 * per host, and each process keeps only how many entries list each name hash (engine/lists/name-counts.ts),
 * built once from the store and then kept current from `sub:rev` (engine/lists/keys.ts). A generation
 * change reads one key; when the entries' revision moved by one, only the names that write changed are
 * counted again; a bigger jump (a process that slept through several refreshes) reads every entry again.
 * A suffix whose hash is counted is looked up in the store, under each source that has entries, for the
 * exact answer: so a source that drops a name does not unlist it while another still has it, and two
 * names with one hash are told apart.
 */
import { fnv1a, type SuffixKeys } from '../names/index.js'
import type { Store } from '../store/index.js'
import { ENTRY_PREFIX, entryName, entryPrefix, REV_KEY, type EntryTarget, type RevRecord } from './keys.js'
import { BLACK, CATEGORY, NameCounts, WHITE, type CountKind } from './name-counts.js'

const kindOf = (target: EntryTarget): CountKind => (target === 'white' ? WHITE : target === 'black' ? BLACK : CATEGORY)

/** The ids of the sources that have entries, in id order: one short range read per source. */
function entrySources(store: Store): string[] {
  const ids: string[] = []
  let from = ENTRY_PREFIX
  for (;;) {
    let key: string | undefined
    for (const e of store.subscriptionRange(ENTRY_PREFIX, from)) {
      key = e.key
      break
    }
    if (key === undefined) return ids
    const id = key.slice(ENTRY_PREFIX.length, key.indexOf(':', ENTRY_PREFIX.length))
    ids.push(id)
    // ';' sorts right after ':', so the next read starts past every entry of this source.
    from = `${ENTRY_PREFIX}${id};`
  }
}

export class SubscriptionIndex {
  private rev = -1
  private readonly counts = new NameCounts()
  private store: Store | undefined
  /** The sources with entries at this revision, in id order. */
  private ids: string[] = []
  /** `target name` → the id of the first source listing it (sourceOf), for this revision; bounded. */
  private readonly sources = new Map<string, string>()

  /** Name hashes counted, over every target. */
  get size(): number {
    return this.counts.size
  }

  /** Follows the store: call when its generation moved. */
  refresh(store: Store): void {
    this.store = store
    const record = store.getSubscriptionValue(REV_KEY) as RevRecord | undefined
    const rev = record?.rev ?? 0
    if (rev === this.rev) return
    this.sources.clear()
    if (record !== undefined && this.rev >= 0 && rev === this.rev + 1) {
      for (const [name, from, to] of record.changes) {
        if (from !== null) this.counts.add(fnv1a(name), kindOf(from), -1)
        if (to !== null) this.counts.add(fnv1a(name), kindOf(to), 1)
      }
      this.rev = rev
    } else {
      this.rev = this.rebuild(store, rev)
    }
    this.ids = entrySources(store)
  }

  /** Reads every entry; again while a write lands meanwhile (the revision read before and after differ). */
  private rebuild(store: Store, rev: number): number {
    let before = rev
    for (;;) {
      this.counts.clear()
      for (const { key, value } of store.subscriptionRange(ENTRY_PREFIX)) {
        // The name's hash straight from the key (after `sub:e:<id>:`): no string made per entry.
        const at = key.indexOf(':', ENTRY_PREFIX.length) + 1
        this.counts.add(fnv1a(key, at), kindOf(value as EntryTarget), 1)
      }
      const after = (store.getSubscriptionValue(REV_KEY) as RevRecord | undefined)?.rev ?? 0
      if (after === before) return after
      before = after
    }
  }

  /** The targets the sources' entries give `name`, in source order (nothing when the store is not read yet). */
  private targetsOf(name: string): EntryTarget[] {
    const out: EntryTarget[] = []
    const store = this.store
    if (store === undefined) return out
    for (const id of this.ids) {
      const t = store.getSubscriptionValue(entryPrefix(id) + name) as EntryTarget | undefined
      if (t !== undefined) out.push(t)
    }
    return out
  }

  /** Whether some source's entry gives `name` the target `target` ('white' or 'black'). */
  private listedAs(name: string, target: 'white' | 'black'): boolean {
    const kind = target === 'white' ? WHITE : BLACK
    return this.counts.has(fnv1a(name), kind) && this.targetsOf(name).includes(target)
  }

  /** The entries' revision (`sub:rev`) the index is at; -1 before the first refresh. */
  get revision(): number {
    return this.rev
  }

  /** Every entry's name and target, in key order (source by source): the RPZ zones' reads. */
  private *entries(): IterableIterator<{ name: string; target: EntryTarget }> {
    if (this.store === undefined) return
    for (const { key, value } of this.store.subscriptionRange(ENTRY_PREFIX))
      yield { name: entryName(key), target: value as EntryTarget }
  }

  /** The names whitelist (`white`) or blacklist (`black`) subscriptions list (the RPZ global zone), each once. */
  *names(target: 'white' | 'black'): IterableIterator<string> {
    if (this.counts.total(target === 'white' ? WHITE : BLACK) === 0) return
    const seen = new Set<string>()
    for (const e of this.entries()) {
      if (e.target !== target || seen.has(e.name)) continue
      seen.add(e.name)
      yield e.name
    }
  }

  /** Each category's names from category subscriptions (the RPZ category zones), each once. */
  categoryNames(): Map<number, string[]> {
    const out = new Map<number, string[]>()
    if (this.counts.total(CATEGORY) === 0) return out
    const seen = new Set<string>()
    for (const { name, target } of this.entries()) {
      if (typeof target !== 'number' || seen.has(`${target} ${name}`)) continue
      seen.add(`${target} ${name}`)
      const list = out.get(target)
      if (list === undefined) out.set(target, [name])
      else list.push(name)
    }
    return out
  }

  /**
   * The id of a source (the first in id order) whose entry for `name` has `target`; '' when none does.
   * Read from the store, once per name and revision (remembered).
   */
  sourceOf(store: Store, name: string, target: EntryTarget): string {
    const key = `${target} ${name}`
    const known = this.sources.get(key)
    if (known !== undefined) return known
    const found = this.ids.find((id) => store.getSubscriptionValue(entryPrefix(id) + name) === target) ?? ''
    if (this.sources.size >= 10_000) this.sources.clear()
    this.sources.set(key, found)
    return found
  }

  /**
   * The first suffix of `keys` a whitelist subscription lists, or ''. The policy keeps its answers per
   * name and revision (engine/policy/global-answers.ts), so the store is read once per name at most.
   */
  firstWhite(keys: SuffixKeys): string {
    return this.firstListed(keys, 'white')
  }

  /** The first suffix of `keys` a blacklist subscription lists, or '' (kept as firstWhite's). */
  firstBlack(keys: SuffixKeys): string {
    return this.firstListed(keys, 'black')
  }

  private firstListed(keys: SuffixKeys, target: 'white' | 'black'): string {
    if (this.counts.total(target === 'white' ? WHITE : BLACK) === 0) return ''
    for (let i = 0; i < keys.labelCount; i++) {
      const k = keys.suffix(i)
      if (this.listedAs(k, target)) return k
    }
    return ''
  }

  /** The categories subscriptions give `keys` (every suffix's), with the suffix that gave the first; undefined when none. */
  categoriesOf(keys: SuffixKeys): { key: string; cats: number[] } | undefined {
    if (this.counts.total(CATEGORY) === 0) return undefined
    let found: { key: string; cats: number[] } | undefined
    for (let i = 0; i < keys.labelCount; i++) {
      const k = keys.suffix(i)
      if (!this.counts.has(fnv1a(k), CATEGORY)) continue
      const cats = this.targetsOf(k).filter((t): t is number => typeof t === 'number')
      if (cats.length === 0) continue
      if (found === undefined) found = { key: k, cats }
      else found.cats.push(...cats)
    }
    return found
  }
}
