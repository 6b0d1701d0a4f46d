/**
 * The compiled category database: the `domains` and `urls` tables that every role looks names up
 * in (docs/contract.md, "Categories and the category database").
 *
 * Atomic rebuilds without stopping readers
 * ----------------------------------------
 * `build-db` never rewrites the live tables. It fills a new pair of named databases,
 * `domains.N` and `urls.N`, in many small batched transactions (so the store's single writer is
 * never held for the whole build and API writes keep flowing), and then, in one tiny transaction,
 * sets `catdb.active = N` in `meta` and bumps the policy generation. A reader looks up through the
 * table its `refresh()` last opened: it sees the old tables or the new ones, never a mix. The
 * tables of the previous version are kept until the next build, so a reader that has not yet
 * refreshed keeps reading a complete, consistent table; older ones are dropped by the builder.
 *
 * Values are the category numbers as uint16 big-endian pairs: a suffix walk on the DNS hot path
 * reads them with `getBinaryFast` (borrowed memory, no msgpack decode, no allocation on a miss).
 */
import type { Database, Transaction } from 'lmdb'
import { HostKeys, type SuffixKeys } from '../names/index.js'
import { ABSENT, KeyTable } from '../names/index.js'
import type { Store } from '../store/index.js'
export { buildCategoryDb } from './build.js'
export { type SnapshotManifest, publishSnapshot, readManifest, readSnapshotFile } from './snapshot.js'

export const META_ACTIVE = 'catdb.active'

const EMPTY = Buffer.alloc(0)
const NO_CATS: readonly number[] = Object.freeze([])
/** Distinct category values the caches keep before they start over (2^23 fits a name entry). */
const MAX_RAWS = 1 << 20

/** The site record of the spec: the key that matched and its categories. */
export interface SiteRecord {
  domain: string
  categories: number[]
}

/** A suffix walk's hit: the key found and its categories as stored (uint16 pairs; read only). */
export interface RawHit {
  readonly key: string
  readonly raw: Buffer
  /** `raw` decoded (shared between lookups of the same name: read it, never write it). */
  readonly cats: readonly number[]
}

export function encodeCats(cats: readonly number[]): Buffer {
  const out = Buffer.allocUnsafe(cats.length * 2)
  for (let i = 0; i < cats.length; i++) out.writeUInt16BE(cats[i]!, i * 2)
  return out
}

export function decodeCats(value: Uint8Array): number[] {
  const out: number[] = []
  // Values are written by encodeCats: an even number of bytes.
  for (let i = 0; i + 1 < value.length; i += 2) out.push((value[i]! << 8) | value[i + 1]!)
  return out
}

/**
 * lmdb-js's `getBinaryFast` takes the same options as `get` (read.js passes `options.transaction`
 * on), but its typings leave the parameter out; this is the shape we call it with.
 */
interface BinaryTable {
  getBinaryFast(key: string, options?: { transaction?: Transaction }): Buffer | undefined
}

function tableNames(version: number): { domains: string; urls: string } {
  return { domains: `domains.${version}`, urls: `urls.${version}` }
}

/**
 * Read side: opens the active version and follows new builds on `refresh()`. Cheap to call
 * often: one `meta` read when nothing changed.
 */
export class CategoryDb {
  private readonly store: Store
  private version = -1
  private domains: Database<Buffer, string> | null = null
  private urls: Database<Buffer, string> | null = null
  /**
   * Recently looked-up keys → their categories (0 = not in the table, r = `raws[r]`), and names →
   * the result of their whole suffix walk (0 = no suffix has an entry, else `r << 8 | label`: the
   * label where the hit's suffix starts); all dropped with the table. DNS and lookup traffic is
   * heavy-tailed (a few thousand names make most queries), and an LMDB read costs several times a
   * cache hit (page walks, a copy): see bench/results/2026-11-history.md. A name seen again costs one probe and
   * no decoding; a new name under a known parent finds the parent's suffixes in the key cache.
   * The caches hold numbers in typed arrays (engine/names/key-table.ts), not objects the garbage collector traces.
   */
  private readonly keys: KeyTable
  private readonly names: KeyTable
  /** The distinct category values seen (few: one per combination of categories), index 0 unused. */
  private raws: Buffer[] = [EMPTY]
  private cats: Array<readonly number[]> = [NO_CATS]
  private readonly rawIndex = new Map<string, number>()

  constructor(store: Store, options: { cacheEntries?: number; nameCacheEntries?: number } = {}) {
    this.keys = new KeyTable(options.cacheEntries ?? 100_000)
    this.names = new KeyTable(options.nameCacheEntries ?? 262_144)
    this.store = store
    this.refresh()
  }

  private clearCaches(): void {
    this.keys.clear()
    this.names.clear()
    this.raws = [EMPTY]
    this.cats = [NO_CATS]
    this.rawIndex.clear()
  }

  /** The index of `raw`'s bytes in `raws` (added when new). */
  private internRaw(raw: Buffer): number {
    const text = raw.toString('latin1')
    let r = this.rawIndex.get(text)
    if (r === undefined) {
      // A pathological table with a million combinations starts the caches over rather than grow them.
      if (this.raws.length >= MAX_RAWS) this.clearCaches()
      r = this.raws.length
      this.raws.push(Buffer.from(raw))
      this.cats.push(Object.freeze(decodeCats(raw)))
      this.rawIndex.set(text, r)
    }
    return r
  }

  /** The active build version (0 when nothing has been built yet). */
  get activeVersion(): number {
    return this.version
  }

  /** Follows a newer build if there is one. Returns true when the tables changed. */
  refresh(): boolean {
    const active = this.store.getMeta(META_ACTIVE)
    const v = typeof active === 'number' ? active : 0
    if (v === this.version) return false
    this.version = v
    this.clearCaches()
    // The held snapshot may predate the new tables.
    this.store.releaseSnapshot()
    if (v === 0) {
      this.domains = null
      this.urls = null
      return true
    }
    const names = tableNames(v)
    this.domains = this.store.root.openDB<Buffer, string>({ name: names.domains, encoding: 'binary' })
    this.urls = this.store.root.openDB<Buffer, string>({ name: names.urls, encoding: 'binary' })
    return true
  }

  /**
   * Categories stored for exactly `key`, as bytes (uint16 pairs), or undefined. The hot-path
   * primitive: the bytes are shared with the cache, so read them, never write them.
   */
  getRaw(key: string): Buffer | undefined {
    if (this.domains === null || key === '') return undefined
    const r = this.rawOf(key)
    return r === 0 ? undefined : this.raws[r]
  }

  /** `key`'s index in `raws` (0: no entry), through the key cache. */
  private rawOf(key: string): number {
    let r = this.keys.get(key)
    if (r === ABSENT) {
      // getBinaryFast's bytes are borrowed until the next read: internRaw keeps a copy. (Its buffer
      // is a shared one whose `length` property lmdb-js overrides, so read it through subarray.)
      // The tables of a version never change once built, so a held snapshot reads them correctly.
      const raw = (this.domains as BinaryTable).getBinaryFast(key, { transaction: this.store.readSnapshot() })
      r = raw === undefined ? 0 : this.internRaw(raw.subarray(0, raw.length))
      this.keys.set(key, r)
    }
    return r
  }

  /** Categories stored for exactly `key`. */
  get(key: string): number[] | undefined {
    const raw = this.getRaw(key)
    return raw === undefined ? undefined : decodeCats(raw)
  }

  /**
   * The spec's site lookup: walks `name`'s suffixes, most specific first
   * (`a.b.example.com`, `b.example.com`, `example.com`, `com`); the first hit wins.
   * `name` must be normalised (engine/names).
   */
  categorize(name: string): SiteRecord | undefined {
    const hit = this.findRaw(new HostKeys(name))
    return hit === undefined ? undefined : { domain: hit.key, categories: [...hit.cats] }
  }

  /**
   * The one suffix walk over the domain table: the first of `keys`' suffixes, most specific
   * first, that has an entry, with its categories undecoded (a caller that caches by the bytes,
   * like the categorization API, decodes nothing on a hit).
   */
  findRaw(keys: SuffixKeys): RawHit | undefined {
    if (this.domains === null || keys.labelCount === 0) return undefined
    const name = keys.suffix(0)
    let found = this.names.get(name)
    if (found === ABSENT) {
      found = 0
      const count = Math.min(keys.labelCount, 255)
      for (let i = 0; i < count; i++) {
        const r = this.rawOf(i === 0 ? name : keys.suffix(i))
        if (r !== 0) {
          found = (r << 8) | i
          break
        }
      }
      this.names.set(name, found)
    }
    if (found === 0) return undefined
    const r = found >>> 8
    const label = found & 255
    return { key: label === 0 ? name : keys.suffix(label), raw: this.raws[r]!, cats: this.cats[r]! } // r < raws.length
  }

  /**
   * URL lookup: URL entries first, the longest one that is a prefix of the request (tried at
   * the full `host+path?query`, then `host+path`, then at every `/` boundary, for the host and
   * each parent domain), then the host's domain record.
   * `host` is normalised; `pathAndQuery` starts with `/` and is byte-exact.
   */
  categorizeUrl(host: string, pathAndQuery: string): SiteRecord | undefined {
    if (this.urls !== null) {
      const q = pathAndQuery.indexOf('?')
      const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q)
      const candidates: string[] = []
      if (q >= 0) candidates.push(pathAndQuery)
      // '/a/b/c' → '/a/b/c', '/a/b/', '/a/b', '/a/', '/a': prefixes at segment boundaries.
      for (let p = path; p.length > 1; p = p.endsWith('/') ? p.slice(0, -1) : p.slice(0, p.lastIndexOf('/') + 1)) {
        candidates.push(p)
      }
      let h = host
      for (;;) {
        for (const c of candidates) {
          const raw = (this.urls as BinaryTable).getBinaryFast(h + c, { transaction: this.store.readSnapshot() })
          if (raw !== undefined) return { domain: h + c, categories: decodeCats(raw) }
        }
        const dot = h.indexOf('.')
        if (dot < 0) break
        h = h.slice(dot + 1)
      }
    }
    return this.categorize(host)
  }

  /**
   * Every entry of the active version in key order, domains first, then URLs (the collector's
   * snapshot export). Reads one consistent LMDB snapshot per table; yields nothing when empty.
   */
  *entries(): Iterable<{ key: string; isUrl: boolean; categories: number[] }> {
    for (const [table, isUrl] of [
      [this.domains, false],
      [this.urls, true]
    ] as const) {
      if (table === null) continue
      for (const { key, value } of table.getRange({ snapshot: true })) {
        yield { key, isUrl, categories: decodeCats(value) }
      }
    }
  }
}

/** Counts a build reports. */
export interface BuildCounts {
  domains: number
  urls: number
  /**
   * Category number → entries of the built tables (domains and URLs) that carry it, counted at
   * commit; null unless the build was begun with `countCategories`.
   */
  perCategory: Map<number, number> | null
}

export interface BuilderOptions {
  /**
   * Operations per write transaction (default 50,000). Each batch holds the store's single writer
   * for a few milliseconds; tests set it small to build a table in many transactions.
   */
  batchSize?: number
  /**
   * Count the entries per category of the final tables at commit (one scan of the new tables,
   * which `build-db` reports; off by default so the local service's updates skip the scan).
   */
  countCategories?: boolean
}

/**
 * Write side of one build: `put`/`del` into the new version's tables, `commit()` to make it
 * active. Writes are awaited in batches so memory stays bounded on inputs of any size.
 */
export class CategoryDbBuilder {
  private readonly store: Store
  readonly version: number
  private readonly domains: Database<Buffer, string>
  private readonly urls: Database<Buffer, string>
  private readonly batch: Array<[key: string, isUrl: boolean, value: Buffer | null]> = []
  private readonly batchSize: number
  private readonly countCategories: boolean

  private constructor(store: Store, version: number, options: BuilderOptions) {
    this.store = store
    this.version = version
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? 50_000))
    this.countCategories = options.countCategories === true
    const names = tableNames(version)
    this.domains = store.root.openDB<Buffer, string>({ name: names.domains, encoding: 'binary' })
    this.urls = store.root.openDB<Buffer, string>({ name: names.urls, encoding: 'binary' })
  }

  /** Starts a build in fresh tables (a crashed earlier build's leftovers are cleared first). */
  static async begin(store: Store, options: BuilderOptions = {}): Promise<CategoryDbBuilder> {
    const active = store.getMeta(META_ACTIVE)
    const builder = new CategoryDbBuilder(store, (typeof active === 'number' ? active : 0) + 1, options)
    await builder.domains.clearAsync()
    await builder.urls.clearAsync()
    return builder
  }

  async put(key: string, isUrl: boolean, cats: readonly number[]): Promise<void> {
    this.batch.push([key, isUrl, encodeCats(cats)])
    if (this.batch.length >= this.batchSize) await this.flush()
  }

  async del(key: string, isUrl: boolean): Promise<void> {
    this.batch.push([key, isUrl, null])
    if (this.batch.length >= this.batchSize) await this.flush()
  }

  /**
   * Writes the batch in one synchronous transaction: the write lock is held for a few
   * milliseconds per batch (API writes interleave between batches), and a synchronous put inside
   * it costs a fraction of an asynchronous put's queueing. Yields to the event loop after each
   * batch so a process serving requests while it builds (the local service) stays responsive.
   */
  private async flush(): Promise<void> {
    const batch = this.batch.splice(0)
    // Sorted by key (stable, so a later op on the same key still wins): inserts then walk the
    // B-tree in order and touch each page once, several times faster on large random input.
    batch.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    this.store.root.transactionSync(() => {
      for (const [key, isUrl, value] of batch) {
        const db = isUrl ? this.urls : this.domains
        if (value === null) db.removeSync(key)
        else db.putSync(key, value)
      }
    })
    await new Promise<void>((resolve) => setImmediate(resolve))
  }

  /** Makes this build the active one and drops versions older than the previous one. */
  async commit(): Promise<BuildCounts> {
    await this.flush()
    // Counted from the tables, not from the input: a name a higher-priority file overrides or
    // deletes is counted once, as it is served. Before activation, so a scan error leaves the
    // live version in place.
    const perCategory = this.countCategories ? this.categoryCounts() : null
    await this.store.write((w) => {
      w.putMeta(META_ACTIVE, this.version)
    })
    for (let v = this.version - 2; v >= 1; v--) {
      const names = tableNames(v)
      const d = this.store.root.openDB({ name: names.domains })
      const u = this.store.root.openDB({ name: names.urls })
      if (d.getCount() === 0 && u.getCount() === 0) break
      await d.drop()
      await u.drop()
    }
    return { domains: this.domains.getCount(), urls: this.urls.getCount(), perCategory }
  }

  private categoryCounts(): Map<number, number> {
    const counts = new Map<number, number>()
    for (const table of [this.domains, this.urls]) {
      for (const { value } of table.getRange({ snapshot: true })) {
        for (const c of decodeCats(value)) counts.set(c, (counts.get(c) ?? 0) + 1)
      }
    }
    return counts
  }
}
