/**
 * The change journal: what each generation's write touched, so that a reader that caches per-address
 * policy (engine/policy) drops only the entries a write could have changed instead of all of them. An
 * ISP's billing system writes every few seconds; emptying every process's cache on each write kept it
 * cold at a million addresses.
 *
 * Each generation bump writes one entry under `['journal', generation]` in `meta` (not a table of its own:
 * a read-only reader cannot open a named database an older version of the store lacks, and `meta` is per
 * host, never replicated: each host journals the changes it applies). The last JOURNAL_GENERATIONS
 * entries are kept; the bump prunes the one that falls out. A reader that moved from G to G' reads
 * (G, G'] and merges them (`readChanges`); a generation without an entry (pruned, or bumped by a writer
 * that journals nothing, such as an older version of filterd) reads as a global change: the reader drops
 * everything, as before the journal existed. So does an entry marked global.
 *
 * What an entry names is derived from the physical key changes (`TouchRecorder.op`), not declared by
 * each API route: a writer cannot forget a key it changed. Only `meta` values, whose meaning the store
 * does not know, are declared by the writer (`putMeta`'s reach), and default to global.
 */
import type { Database } from 'lmdb'
import { CIDR_PREFIX, CLIENT_ID_PREFIX, SUBSCRIPTION_PREFIX, type PolicyDb } from './types.js'

/** Generations whose entries are kept: at a write a second, about an hour of a reader standing still. */
export const JOURNAL_GENERATIONS = 4096

/** Keys one entry names at most; a write touching more (an import) is journaled as global. */
export const JOURNAL_MAX_KEYS = 10_000

const JOURNAL = 'journal'

/**
 * One generation's entry as stored (short fields: it is written with every write). Absent fields are
 * empty. `g`: global (drop everything); `u` users whose record or own lists changed; `a` exact addresses
 * and `c` client IDs whose owner changed; `p` delegated prefixes whose owner changed; `l` the global
 * lists; `d` the server defaults (the anonymous policy).
 */
interface JournalEntry {
  g?: 1
  u?: string[]
  a?: string[]
  c?: string[]
  p?: string[]
  l?: 1
  d?: 1
}

/** What a reader must drop between two generations (several entries merged), or `global`. */
export interface StoreChanges {
  /** Everything may have changed: drop every cached snapshot. */
  readonly global: boolean
  readonly users: ReadonlySet<string>
  readonly addresses: ReadonlySet<string>
  readonly clientIds: ReadonlySet<string>
  /** Delegated prefixes (canonical `addr/len`) added, moved or removed. */
  readonly prefixes: readonly string[]
  readonly globalLists: boolean
  readonly serverDefaults: boolean
}

/**
 * Where a `meta` value reaches: 'every-snapshot' (the default: the store does not know what a meta key
 * means, so readers drop everything) or 'no-snapshot', for a value no per-address snapshot holds and
 * every reader re-reads on any generation change anyway (an RPZ feed's pointer).
 */
export type MetaReach = 'every-snapshot' | 'no-snapshot'

/** Collects what one write transaction touched, from its key changes. */
export class TouchRecorder {
  private readonly users = new Set<string>()
  private readonly addresses = new Set<string>()
  private readonly clientIds = new Set<string>()
  private readonly prefixes = new Set<string>()
  private globalLists = false
  private serverDefaults = false
  private global = false

  /** One put or remove of `key` in `db`. */
  op(db: PolicyDb, key: string): void {
    switch (db) {
      case 'users':
        this.users.add(key)
        return
      case 'ips':
        if (key.startsWith(CLIENT_ID_PREFIX)) this.clientIds.add(key.slice(CLIENT_ID_PREFIX.length))
        else if (key.startsWith(CIDR_PREFIX)) this.prefixes.add(key.slice(CIDR_PREFIX.length))
        else this.addresses.add(key)
        return
      case 'lists':
        this.listOp(key)
        return
      case 'settings':
        // `userconfig` is what a new user starts with: the API reads it when creating one, no snapshot does.
        if (key === 'config') this.serverDefaults = true
        else if (key !== 'userconfig') this.global = true
        return
      case 'clients':
        // API credentials: verified by their own cache, which follows the generation; no policy holds them.
        return
    }
  }

  private listOp(key: string): void {
    // The subscriptions' index (engine/lists) is read apart from the snapshots and refreshed by
    // difference on every generation change: a refresh evicts nothing.
    if (key.startsWith(SUBSCRIPTION_PREFIX)) return
    if (key.startsWith('global:')) {
      this.globalLists = true
      return
    }
    const m = /^user:(.*):(?:black|white)$/.exec(key)
    if (m === null) this.global = true
    else this.users.add(m[1]!)
  }

  /** A `meta` value written (see MetaReach). */
  meta(reach: MetaReach): void {
    if (reach === 'every-snapshot') this.global = true
  }

  /** Marks the write global (a writer that cannot say what it changed). */
  all(): void {
    this.global = true
  }

  entry(): JournalEntry {
    const size = this.users.size + this.addresses.size + this.clientIds.size + this.prefixes.size
    if (this.global || size > JOURNAL_MAX_KEYS) return GLOBAL_ENTRY
    const e: JournalEntry = {}
    if (this.users.size > 0) e.u = [...this.users]
    if (this.addresses.size > 0) e.a = [...this.addresses]
    if (this.clientIds.size > 0) e.c = [...this.clientIds]
    if (this.prefixes.size > 0) e.p = [...this.prefixes]
    if (this.globalLists) e.l = 1
    if (this.serverDefaults) e.d = 1
    return e
  }
}

const GLOBAL_ENTRY: JournalEntry = { g: 1 }

/** The entry of a bump that names nothing it touched: global. */
export const globalEntry = (): JournalEntry => GLOBAL_ENTRY

/** Writes `generation`'s entry and prunes those older than the window. Inside the bump's write transaction. */
export function journalGeneration(meta: Database, generation: number, entry: JournalEntry): void {
  meta.putSync([JOURNAL, generation], entry)
  // Usually exactly one key leaves the window; more after a store written by a version without the
  // window (or with a larger one).
  const end = generation - JOURNAL_GENERATIONS + 1
  if (end <= 0) return
  // Collected first: the cursor is not walked while the keys under it are removed.
  const old = [...meta.getKeys({ start: [JOURNAL, 0], end: [JOURNAL, end] })]
  for (const key of old) meta.removeSync(key)
}

const EVERYTHING: StoreChanges = {
  global: true,
  users: new Set(),
  addresses: new Set(),
  clientIds: new Set(),
  prefixes: [],
  globalLists: true,
  serverDefaults: true
}

/** What changed in generations (from, to], merged; global when an entry is missing or global. */
export function readChanges(meta: Database, from: number, to: number): StoreChanges {
  if (to <= from || to - from > JOURNAL_GENERATIONS) return EVERYTHING
  const users = new Set<string>()
  const addresses = new Set<string>()
  const clientIds = new Set<string>()
  const prefixes: string[] = []
  let globalLists = false
  let serverDefaults = false
  let expected = from + 1
  for (const { key, value } of meta.getRange({ start: [JOURNAL, from + 1], end: [JOURNAL, to + 1] })) {
    const g = (key as [string, number])[1]
    if (g !== expected) return EVERYTHING
    expected++
    const e = value as JournalEntry
    if (e.g === 1) return EVERYTHING
    for (const u of e.u ?? []) users.add(u)
    for (const a of e.a ?? []) addresses.add(a)
    for (const c of e.c ?? []) clientIds.add(c)
    if (e.p !== undefined) prefixes.push(...e.p)
    if (e.l === 1) globalLists = true
    if (e.d === 1) serverDefaults = true
  }
  if (expected !== to + 1) return EVERYTHING
  return { global: false, users, addresses, clientIds, prefixes, globalLists, serverDefaults }
}
