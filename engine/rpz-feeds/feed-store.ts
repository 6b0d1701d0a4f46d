/**
 * The RPZ feeds in the store (RPZ in): one copy per host, shared by every process that judges.
 *
 * One process per host follows the feeds (the dns role's primary process: dns/role.ts) and writes
 * each feed's enforced triggers into the LMDB database `rpz-feeds`; every DNS front process, every
 * pool worker, the block page and the api role read them from there (`StoredFeeds`), so they all
 * enforce the same serial, and a new serial reaches them with the store's generation, as any policy
 * write does. The feeds are this host's: they are not policy the shared Redis store replicates
 * (each host transfers its own, docs/operations-redis.md).
 *
 * Layout of `rpz-feeds` (keys are arrays, ordered by lmdb-js's ordered-binary):
 *   [zone, version, owner]   the trigger records (`type data`, NS left out) of one QNAME owner
 *                            (`bad.example`, `*.bad.example`, `*`), relative to the zone
 *   [zone, 0]                the feed's status for /metrics (state, serial, errors, counts), written
 *                            on every refresh without moving the generation
 * and `meta` holds `rpz-feed:ZONE`: the version enforced, its serial and its CLIENT-IP triggers (few,
 * compiled by each reader), or nothing while the feed enforces nothing.
 *
 * A whole load (AXFR, zone file) is written as a new version in batches, then made the enforced one
 * by one store write (which moves the generation); the version before it is kept until the next
 * whole load, since a reader may look it up for a few milliseconds before it sees the new pointer.
 * An IXFR's changed owners are written into the enforced version in the same transaction as the new
 * pointer, so no reader sees part of it.
 */
import type { Database } from 'lmdb'
import { ABSENT, KeyTable } from '../names/index.js'
import { cidrContains, ipBytes, type Cidr } from '../net/index.js'
import type { Store } from '../store/index.js'
import { actionOf, clientIpCidr, isClientIpOwner, isTrigger, type FeedAction, type FeedZone } from './feed.js'
import type { FeedReport, RpzHit, RpzLayer } from './feed-set.js'
import { overridden, type FeedSettings } from './feed-config.js'
import { loadingStatus } from './follower.js'

const TABLE = 'rpz-feeds'
const POINTER_PREFIX = 'rpz-feed:'
/** Owners per write transaction of a whole load: each holds the store's single writer for a few ms. */
const BATCH = 20_000

/** What `meta` says a reader enforces of one feed. */
interface FeedPointer {
  version: number
  serial: number
  /** CLIENT-IP owners (`32.2.0.0.127.rpz-client-ip`) and their trigger records. */
  clientIps: Array<[owner: string, records: string[]]>
}

type FeedKey = [zone: string, version: number] | [zone: string, version: number, owner: string]

function openTable(store: Store): Database<string[] | FeedReport, FeedKey> {
  return store.root.openDB<string[] | FeedReport, FeedKey>({ name: TABLE })
}

/** The trigger records of one owner as the readers need them, or undefined when it has none they enforce. */
function enforced(owner: string, records: readonly string[]): string[] | undefined {
  if (!isTrigger(owner)) return undefined
  const triggers = records.filter((v) => !v.startsWith('2 ')) // an NS is no trigger (TYPE_NS = 2)
  return triggers.length === 0 ? undefined : triggers
}

/** The CLIENT-IP owners and their triggers: few, read by each reader from the feed's pointer. */
function clientIpsOf(feed: FeedZone): Array<[string, string[]]> {
  const out: Array<[string, string[]]> = []
  for (const [owner, records] of feed.textOwners()) {
    if (!isClientIpOwner(owner)) continue
    const triggers = records.filter((v) => !v.startsWith('2 '))
    if (triggers.length > 0) out.push([owner, triggers])
  }
  return out
}

/**
 * The writing side: keeps the store's copy of each feed current as its follower refreshes it. One
 * instance per host (the process that follows the feeds).
 */
export class FeedStoreWriter {
  private readonly store: Store
  private readonly table: Database<string[] | FeedReport, FeedKey>
  /** Feeds whose last write failed: written whole next time. */
  private readonly stale = new Set<string>()

  constructor(store: Store) {
    this.store = store
    this.table = openTable(store)
  }

  /** True when the store enforces a version of `zone` (a process before it can answer from it). */
  holds(zone: string): boolean {
    return this.pointer(zone) !== undefined
  }

  private pointer(zone: string): FeedPointer | undefined {
    return this.store.getMeta(POINTER_PREFIX + zone) as FeedPointer | undefined
  }

  /**
   * Writes what one refresh changed: the whole feed (`change` 'whole'), the owners an IXFR changed
   * (a map), or nothing but the status (null; `feed` undefined: the feed enforces nothing now).
   */
  async update(
    feed: FeedZone | undefined,
    change: 'whole' | ReadonlyMap<string, readonly string[]> | null,
    report: FeedReport
  ): Promise<void> {
    const zone = report.zone
    const held = this.pointer(zone)
    try {
      await this.table.put([zone, 0], report)
      if (feed === undefined) {
        // Only an expired feed stops being enforced: a process that has not loaded the feed yet (a
        // restart while the primary is away) keeps the copy the store holds until the feed's expire.
        if (held !== undefined && report.state === 'expired')
          await this.store.write((w) => w.putMeta(POINTER_PREFIX + zone, undefined, 'no-snapshot'))
      } else if (change === 'whole' && held?.serial === feed.serial && !this.stale.has(zone)) {
        // The serial the store enforces, transferred whole again (each start of the following process
        // takes an AXFR): the same zone, so nothing is written and no reader drops its caches.
      } else if (change === 'whole' || held === undefined || this.stale.has(zone)) {
        await this.writeWhole(zone, feed, held)
        this.stale.delete(zone)
      } else if (change !== null || held.serial !== feed.serial) await this.writeChanges(zone, feed, held, change)
    } catch (err) {
      // The store's copy may now lack changes the feed in memory has: the next write is whole.
      this.stale.add(zone)
      throw err
    }
  }

  private async writeWhole(zone: string, feed: FeedZone, held: FeedPointer | undefined): Promise<void> {
    const version = (held?.version ?? 0) + 1
    await this.removeVersion(zone, version) // a crashed earlier write's leftovers
    let batch: Array<[string, string[]]> = []
    const flush = async (): Promise<void> => {
      const rows = batch
      batch = []
      this.store.root.transactionSync(() => {
        for (const [owner, records] of rows) this.table.putSync([zone, version, owner], records)
      })
      // A process that also answers queries (proxy.processes: 1) keeps answering between batches.
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
    for (const [owner, records] of feed.owners()) {
      const triggers = enforced(owner, records)
      if (triggers === undefined) continue
      batch.push([owner, triggers])
      if (batch.length >= BATCH) await flush()
    }
    await flush()
    const pointer: FeedPointer = { version, serial: feed.serial, clientIps: clientIpsOf(feed) }
    await this.store.write((w) => w.putMeta(POINTER_PREFIX + zone, pointer, 'no-snapshot'))
    if (version > 2) await this.removeVersion(zone, version - 2)
  }

  private async writeChanges(
    zone: string,
    feed: FeedZone,
    held: FeedPointer,
    change: ReadonlyMap<string, readonly string[]> | null
  ): Promise<void> {
    const version = held.version
    const pointer: FeedPointer = { version, serial: feed.serial, clientIps: clientIpsOf(feed) }
    // One transaction: the changed owners and the pointer that says their serial, with the generation.
    await this.store.write((w) => {
      for (const [owner, records] of change ?? []) {
        const triggers = enforced(owner, records)
        if (triggers === undefined) this.table.removeSync([zone, version, owner])
        else this.table.putSync([zone, version, owner], triggers)
      }
      w.putMeta(POINTER_PREFIX + zone, pointer, 'no-snapshot')
    })
  }

  private async removeVersion(zone: string, version: number): Promise<void> {
    for (;;) {
      const keys = [...this.table.getKeys({ start: [zone, version], end: [zone, version + 1], limit: BATCH })]
      if (keys.length === 0) return
      this.store.root.transactionSync(() => {
        for (const key of keys) this.table.removeSync(key)
      })
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }
}

/** A QNAME lookup's answer: the action and the owner that matched. */
interface QnameMatch {
  action: FeedAction
  trigger: string
}

/** Names whose QNAME answer a feed's reader keeps (a hit or a miss), per feed. */
const QNAME_CACHE_NAMES = 50_000

interface ReadFeed {
  readonly settings: FeedSettings
  version: number
  serial: number
  clientIps: Array<{ cidr: Cidr; action: FeedAction; trigger: string }>
  /**
   * Name -> its QNAME answer for this version and serial: 0 no match, i > 0 `matches[i - 1]`. A miss
   * costs one LMDB get per label and one more for `*` (four for www.example.org), a miss is what almost
   * every query is, and a resolver's traffic repeats its names: at ISP size those gets were a sixth of
   * the DNS process's time. Emptied when the serial or the version moves.
   */
  readonly names: KeyTable
  matches: QnameMatch[]
}

/**
 * The reading side: the feeds of `rpz-feeds.feeds`, in precedence order, as the store holds them.
 * The policy calls `refresh` when the store's generation moves (engine/policy), so the pointers and
 * the CLIENT-IP triggers are read once per generation; a QNAME lookup reads the table (one LMDB get
 * for the name, one per wildcard level until one matches).
 */
export class StoredFeeds implements RpzLayer {
  private readonly store: Store
  private readonly feeds: ReadFeed[]
  private table: Database<string[] | FeedReport, FeedKey> | null = null

  constructor(store: Store, settings: readonly FeedSettings[]) {
    this.store = store
    this.feeds = settings.map((s) => ({
      settings: s,
      version: 0,
      serial: 0,
      clientIps: [],
      names: new KeyTable(QNAME_CACHE_NAMES),
      matches: []
    }))
    this.refresh()
  }

  /** Reads the feeds' pointers again (the generation moved). */
  refresh(): void {
    let any = false
    for (const f of this.feeds) {
      const p = this.store.getMeta(POINTER_PREFIX + f.settings.zone) as FeedPointer | undefined
      const version = p?.version ?? 0
      const serial = p?.serial ?? 0
      // An IXFR changes owners in place, under the same version: the serial says the names moved.
      if (version !== f.version || serial !== f.serial) forget(f)
      f.version = version
      f.serial = serial
      f.clientIps = []
      if (p === undefined) continue
      any = true
      for (const [owner, records] of p.clientIps) {
        const cidr = clientIpCidr(owner)
        if (cidr !== undefined) f.clientIps.push({ cidr, action: actionOf(records), trigger: `client-ip ${cidr.text}` })
      }
      f.clientIps.sort((a, b) => b.cidr.prefix - a.cidr.prefix)
    }
    // A read-only reader can open the table only once the writer has created it.
    if (any && this.table === null) this.table = this.openTable()
  }

  private openTable(): Database<string[] | FeedReport, FeedKey> | null {
    try {
      return openTable(this.store)
    } catch {
      return null
    }
  }

  match(name: string, client: string): RpzHit | undefined {
    const table = this.table
    if (table === null) return undefined
    for (const f of this.feeds) {
      if (f.version === 0) continue
      const m = this.matchOne(table, f, name, client)
      if (m === undefined) continue
      const s = f.settings
      return { zone: s.zone, trigger: m.trigger, action: overridden(m.action, s.action), category: s.category }
    }
    return undefined
  }

  /** One feed's action for `name` from `client`: CLIENT-IP first, then QNAME (as FeedZone.match). */
  private matchOne(
    table: Database<string[] | FeedReport, FeedKey>,
    f: ReadFeed,
    name: string,
    client: string
  ): QnameMatch | undefined {
    if (client !== '' && f.clientIps.length > 0) {
      const bytes = ipBytes(client)
      if (bytes !== undefined) for (const c of f.clientIps) if (cidrContains(c.cidr, bytes)) return c
    }
    const cached = f.names.get(name)
    if (cached !== ABSENT) return cached === 0 ? undefined : f.matches[cached - 1]
    const m = qnameMatch(table, f, name)
    if (m === undefined) f.names.set(name, 0)
    else {
      // Matches are few beside misses; past the cache's size they start again with it.
      if (f.matches.length >= QNAME_CACHE_NAMES) forget(f)
      f.matches.push(m)
      f.names.set(name, f.matches.length)
    }
    return m
  }

  /** Each feed's state as the process that follows it last wrote it (for /metrics). */
  reports(): FeedReport[] {
    const table = this.table ?? this.openTable()
    this.table = table
    return this.feeds.map((f) => {
      const stored = table?.get([f.settings.zone, 0]) as FeedReport | undefined
      return stored ?? { ...loadingStatus(f.settings.zone), unsupported: 0 }
    })
  }
}

/** Empties a feed's QNAME cache. */
function forget(f: ReadFeed): void {
  f.names.clear()
  f.matches = []
}

/** One feed's QNAME answer for `name` from the table (as FeedZone.match): the name, then its wildcards. */
function qnameMatch(
  table: Database<string[] | FeedReport, FeedKey>,
  f: ReadFeed,
  name: string
): QnameMatch | undefined {
  const zone = f.settings.zone
  const get = (owner: string): string[] | undefined => table.get([zone, f.version, owner]) as string[] | undefined
  let records = get(name)
  if (records !== undefined) return { action: actionOf(records), trigger: name }
  // The most specific wildcard first: `*.b.c` before `*.c` before `*`.
  for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) {
    const trigger = `*.${name.slice(i + 1)}`
    records = get(trigger)
    if (records !== undefined) return { action: actionOf(records), trigger }
  }
  records = get('*')
  return records === undefined ? undefined : { action: actionOf(records), trigger: '*' }
}
