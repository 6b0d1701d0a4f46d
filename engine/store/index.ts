/**
 * The store: one LMDB environment shared by every role on a host (docs/contract.md, The store).
 *
 * Named databases: `domains`/`urls` (the compiled category tables, owned by engine/categories),
 * `users`, `ips` (address or prefix → user), `lists` (global and per-user black/whitelists),
 * `settings` (`/config/`, `/userconfig/`), `clients` (API credentials: the categorization API's under
 * their id, the management API's under `api:<id>`, see API_CLIENT_PREFIX), `usage`
 * (per-client daily counts) and `meta` (the generation counter).
 *
 * Writes go through `write(fn)` (engine/store/writer.ts): `fn` runs synchronously inside one LMDB
 * write transaction (so a request either changes everything it meant to or nothing), the generation
 * is bumped in the same transaction, and the returned promise resolves only once the commit is
 * flushed to disk, so an acknowledged API write survives a crash. A host of several applies the
 * shared store's records through the `ReplicaStore` methods (engine/store/replica.ts). Readers in other processes (the DNS server) see the
 * commit on their next event turn, when lmdb-js renews its read transaction; they notice policy
 * changes by polling `generation()`, which is one cheap read.
 */
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../config/index.js'
import { EngineError } from '../errors.js'
import { cidrContains, ipBytes, parseCidr, type Cidr } from '../net/index.js'
import { generationOf, LmdbReplica, META_POSITION, META_STATE, type ReplicaStore } from './replica.js'
import {
  API_CLIENT_PREFIX,
  CIDR_PREFIX,
  CLIENT_ID_PREFIX,
  DB_NAMES,
  listKey,
  type ClientRecord,
  type DbName,
  type ListKind,
  type ListScope,
  type PolicyDb,
  type RemoteCommit,
  type ReplicaPosition,
  type ServerDefaults,
  type StoreOp,
  type StoreOptions,
  type StoreWriter,
  type UserDefaults,
  type UserRecord
} from './types.js'
import { writeLocal, writeRemote, type WriteTarget } from './writer.js'
import { readChanges, type StoreChanges } from './journal.js'

export { GenerationWatcher, GENERATION_CHECK_MS, type GenerationWatcherOptions } from './generation.js'
export {
  API_CLIENT_PREFIX,
  CLIENT_ID_PREFIX,
  POLICY_DBS,
  SUBSCRIPTION_PREFIX,
  type ClientRecord,
  type ListKind,
  type ListScope,
  type OnOff,
  type PolicyDb,
  type RemoteCommit,
  type RemoteWrite,
  type ReplicaPosition,
  type ServerDefaults,
  type StoreOp,
  type StoreOptions,
  type StoreWriter,
  type UserDefaults,
  type UserRecord
} from './types.js'
export type { ReplicaStore } from './replica.js'
export { JOURNAL_GENERATIONS, type MetaReach, type StoreChanges } from './journal.js'
export { ClientIdMemory, CLIENT_ID_MEMORY_DIR } from './client-id-memory.js'

/** How long `readSnapshot()` keeps one read transaction. */
export const SNAPSHOT_MAX_AGE_MS = 1000

export class Store implements ReplicaStore {
  readonly root: RootDatabase
  readonly path: string
  private readonly dbs: Record<DbName, Database>
  private readonly initialRedirect: string
  private readonly initialFilter: readonly number[]
  private cidrGeneration = -1
  private cidrs: Array<{ cidr: Cidr; user: string }> = []
  private snapshot: Transaction | undefined = undefined
  private snapshotAt = 0
  private snapshotSweep: NodeJS.Timeout | undefined = undefined
  private remote: RemoteCommit | undefined = undefined
  private readonly replica: LmdbReplica
  private readonly target: WriteTarget

  private constructor(path: string, root: RootDatabase, options: StoreOptions) {
    this.path = path
    this.root = root
    this.initialRedirect = options.safesearchredirect ?? ''
    this.initialFilter = options.defaultFilter ?? []
    const dbs: Partial<Record<DbName, Database>> = {}
    for (const name of DB_NAMES) dbs[name] = root.openDB({ name })
    this.dbs = dbs as Record<DbName, Database>
    this.replica = new LmdbReplica(root, this.dbs, path)
    this.target = { store: this, path, root, dbs: this.dbs }
  }

  /** Opens (creating when writable) the environment at `path`. */
  static open(path: string, options: StoreOptions = {}): Store {
    try {
      if (options.readOnly !== true) mkdirSync(path, { recursive: true })
      // No event-turn batching: lmdb-js then starts each turn's writes with a promise of its own that
      // nobody holds, and a failed commit (a full disk) rejects it unhandled, which ends the process.
      // Writes here are transactions already (engine/store/writer.ts), batched by lmdb-js's commit delay.
      const root = open({ path, maxDbs: 64, readOnly: options.readOnly === true, eventTurnBatching: false })
      return new Store(path, root, options)
    } catch (err) {
      throw new EngineError('ENGINE_STORE_OPEN', `cannot open the store at ${path}: ${(err as Error).message}`, {
        cause: err
      })
    }
  }

  async close(): Promise<void> {
    clearInterval(this.snapshotSweep)
    this.snapshotSweep = undefined
    this.releaseSnapshot()
    await this.root.close()
  }

  /**
   * A read transaction for hot-path lookups in tables that never change once written (the category
   * database's versioned tables), held for up to SNAPSHOT_MAX_AGE_MS. lmdb-js otherwise renews its
   * read transaction on the first read of every event-loop turn and schedules a timer to reset it,
   * which costs an HTTP lookup about as much as the lookup itself. Not for data that changes in
   * place: the snapshot does not see writes made after it began. The age bound keeps a long-held
   * reader from pinning old pages (writers could not reuse them, and the file would grow).
   */
  readSnapshot(): Transaction {
    const now = Date.now()
    const age = now - this.snapshotAt
    if (this.snapshot === undefined || age > SNAPSHOT_MAX_AGE_MS || age < 0) {
      this.releaseSnapshot()
      this.snapshot = this.root.useReadTransaction()
      this.snapshotAt = now
      // A process that stops looking names up must not keep the snapshot (and its pages) forever.
      this.snapshotSweep ??= setInterval(() => {
        if (this.snapshot !== undefined && Date.now() - this.snapshotAt > SNAPSHOT_MAX_AGE_MS) this.releaseSnapshot()
      }, SNAPSHOT_MAX_AGE_MS).unref()
    }
    return this.snapshot
  }

  /** Whether a snapshot is held now (for tests and metrics). */
  get holdsSnapshot(): boolean {
    return this.snapshot !== undefined
  }

  /** Lets the snapshot go; the next `readSnapshot()` starts a current one (after a new table appears, say). */
  releaseSnapshot(): void {
    const t = this.snapshot
    this.snapshot = undefined
    t?.done()
  }

  /** The policy generation: bumped by every write; readers drop cached policy when it moves. */
  generation(): number {
    return generationOf(this.dbs.meta)
  }

  /**
   * What the writes of generations (from, to] touched, from the change journal (engine/store/journal.ts);
   * `global` when the journal no longer holds one of them or one was global.
   */
  changesBetween(from: number, to: number): StoreChanges {
    return readChanges(this.dbs.meta, from, to)
  }

  getMeta(key: string): unknown {
    return this.dbs.meta.get(key)
  }

  getUser(id: string): UserRecord | undefined {
    return this.dbs.users.get(id) as UserRecord | undefined
  }

  hasUser(id: string): boolean {
    return this.dbs.users.doesExist(id)
  }

  /** Users in key order (stable), `start` inclusive, `stop` exclusive. */
  listUsers(start = 0, stop = start + 100): UserRecord[] {
    const out: UserRecord[] = []
    if (stop <= start) return out
    for (const { value } of this.dbs.users.getRange({ offset: start, limit: stop - start }))
      out.push(value as UserRecord)
    return out
  }

  /** Every user id in key order. */
  *userIds(): Iterable<string> {
    for (const key of this.dbs.users.getKeys()) yield key as string
  }

  *users(): Iterable<UserRecord> {
    for (const { value } of this.dbs.users.getRange()) yield value as UserRecord
  }

  userCount(): number {
    return this.dbs.users.getCount()
  }

  /** Number of address and prefix entries mapped to users (client IDs share the table: not counted). */
  addressCount(): number {
    // `id;` is the key right after every `id:…` one.
    return this.dbs.ips.getCount() - this.dbs.ips.getCount({ start: CLIENT_ID_PREFIX, end: 'id;' })
  }

  /** The user a client ID (canonical: lower case) is mapped to. */
  userForClientId(clientId: string): string | undefined {
    return this.dbs.ips.get(CLIENT_ID_PREFIX + clientId) as string | undefined
  }

  /** The user an exact canonical address or prefix entry is mapped to. */
  ownerOf(address: string): string | undefined {
    const key = address.includes('/') ? CIDR_PREFIX + address : address
    return this.dbs.ips.get(key) as string | undefined
  }

  /**
   * The user owning `address` (canonical text): an exact mapping first, then the longest
   * matching delegated prefix. Prefixes are few; they are reloaded when the generation moves.
   */
  userForAddress(address: string, bytes?: Uint8Array): string | undefined {
    const exact = this.dbs.ips.get(address) as string | undefined
    if (exact !== undefined) return exact
    const g = this.generation()
    if (g !== this.cidrGeneration) this.loadCidrs(g)
    if (this.cidrs.length === 0) return undefined
    const b = bytes ?? ipBytes(address)
    if (b === undefined) return undefined
    for (const { cidr, user } of this.cidrs) if (cidrContains(cidr, b)) return user
    return undefined
  }

  private loadCidrs(generation: number): void {
    const list: Array<{ cidr: Cidr; user: string }> = []
    for (const { key, value } of this.dbs.ips.getRange({ start: CIDR_PREFIX, end: 'cidr;' })) {
      const cidr = parseCidr((key as string).slice(CIDR_PREFIX.length))
      if (cidr !== undefined) list.push({ cidr, user: value as string })
    }
    list.sort((a, b) => b.cidr.prefix - a.cidr.prefix)
    this.cidrs = list
    this.cidrGeneration = generation
  }

  /**
   * Users whose id starts with `prefix`, in key order, at most `limit` (the API's `/search/abc*`).
   * A range read from the first key >= prefix: no scan of the users before it.
   */
  usersWithPrefix(prefix: string, limit: number): UserRecord[] {
    const out: UserRecord[] = []
    if (limit <= 0) return out
    for (const { key, value } of this.dbs.users.getRange({ start: prefix })) {
      if (!(key as string).startsWith(prefix)) break
      out.push(value as UserRecord)
      if (out.length >= limit) break
    }
    return out
  }

  /**
   * Address and prefix entries whose canonical text starts with `prefix` (the API's
   * `/search/10.1.*`), with their owners, in key order, at most `limit`. Delegated prefixes are
   * returned with their `/n`.
   */
  addressesWithPrefix(prefix: string, limit: number): Array<{ address: string; user: string }> {
    const out: Array<{ address: string; user: string }> = []
    if (limit <= 0) return out
    for (const start of [prefix, CIDR_PREFIX + prefix]) {
      for (const { key, value } of this.dbs.ips.getRange({ start })) {
        const k = key as string
        if (!k.startsWith(start)) break
        // An IPv6 prefix such as `c` also matches the `cidr:` keys; those are read by the second pass.
        if (start === prefix && k.startsWith(CIDR_PREFIX)) continue
        out.push({ address: start === prefix ? k : k.slice(CIDR_PREFIX.length), user: value as string })
        if (out.length >= limit) return out
      }
    }
    return out
  }

  getList(scope: ListScope, kind: ListKind): string[] {
    return (this.dbs.lists.get(listKey(scope, kind)) as string[] | undefined) ?? []
  }

  /** A value of the list subscriptions' keys (`sub:` in `lists`, engine/lists/keys.ts). */
  getSubscriptionValue(key: string): unknown {
    return this.dbs.lists.get(key)
  }

  /** The list subscriptions' keys that start with `prefix` (`sub:…`), in key order, from `from` on. */
  *subscriptionRange(prefix: string, from = prefix): Iterable<{ key: string; value: unknown }> {
    for (const { key, value } of this.dbs.lists.getRange({ start: from })) {
      if (!(key as string).startsWith(prefix)) break
      yield { key: key as string, value }
    }
  }

  getServerDefaults(): ServerDefaults {
    const v = this.dbs.settings.get('config') as ServerDefaults | undefined
    return (
      v ?? {
        filter: [...this.initialFilter],
        safesearch: false,
        safeyoutube: false,
        safesearchredirect: this.initialRedirect
      }
    )
  }

  getUserDefaults(): UserDefaults {
    const v = this.dbs.settings.get('userconfig') as UserDefaults | undefined
    return v ?? { filter: [], safesearch: false, safeyoutube: false }
  }

  /** A categorization API client (never a management API one: those ids hold no `:`). */
  getClient(id: string): ClientRecord | undefined {
    if (id.includes(':')) return undefined
    return this.dbs.clients.get(id) as ClientRecord | undefined
  }

  /** The categorization API's clients, in id order. */
  *clients(): Iterable<ClientRecord> {
    for (const { key, value } of this.dbs.clients.getRange()) {
      if (!(key as string).startsWith(API_CLIENT_PREFIX)) yield value as ClientRecord
    }
  }

  /** A management API client by its bare id. */
  getApiClient(id: string): ClientRecord | undefined {
    return this.dbs.clients.get(API_CLIENT_PREFIX + id) as ClientRecord | undefined
  }

  /** The management API's clients, in id order. */
  *apiClients(): Iterable<ClientRecord> {
    // `api;` is the key right after every `api:…` one.
    for (const { value } of this.dbs.clients.getRange({ start: API_CLIENT_PREFIX, end: 'api;' }))
      yield value as ClientRecord
  }

  /** The `usage` database: per-client daily counters, keyed by the catapi role. */
  get usage(): Database {
    return this.dbs.usage
  }

  /** A user as `/userconfig/` says a new user starts. */
  newUser(id: string): UserRecord {
    const d = this.getUserDefaults()
    return {
      name: id,
      safesearch: d.safesearch ? 'on' : 'off',
      safeyoutube: d.safeyoutube ? 'on' : 'off',
      status: 'enabled',
      filter: [...d.filter],
      ip: [],
      ...(d.schedules !== undefined && d.schedules.length > 0 ? { schedules: structuredClone(d.schedules) } : {})
    }
  }

  /**
   * Runs `fn` in one write transaction, bumps the generation, and resolves with its result once
   * the commit is durable. If `fn` throws, nothing it did is committed and the error propagates.
   * With a remote commit installed, policy changes go there instead (engine/store/writer.ts); without
   * one, a store that follows a shared store refuses them (ENGINE_STORE_FOLLOWS_REDIS).
   */
  async write<T>(fn: (w: StoreWriter) => T): Promise<T> {
    return this.remote !== undefined
      ? await writeRemote(this.target, fn, this.remote)
      : await writeLocal(this.target, fn)
  }

  /**
   * Sends policy writes to `commit` instead of committing them here (a host of several sharing one
   * Redis): `write(fn)` runs `fn` on the local replica in a write transaction that is rolled back,
   * records the key-level changes it made, and hands them to `commit`. Writes touching only `meta`
   * (the category database's active version, which is per host) still commit locally.
   */
  useRemoteCommit(commit: RemoteCommit | undefined): void {
    this.remote = commit
  }

  // The replica's side (ReplicaStore, engine/store/replica.ts): reads here, applies in LmdbReplica.

  replicaState(): string | undefined {
    return this.dbs.meta.get(META_STATE) as string | undefined
  }

  replicaPosition(): ReplicaPosition | undefined {
    return this.dbs.meta.get(META_POSITION) as ReplicaPosition | undefined
  }

  foreignGeneration(): boolean {
    return this.replica.foreignGeneration()
  }

  policyKeys(db: PolicyDb, after: string | undefined, limit: number): string[] {
    const out: string[] = []
    for (const key of this.dbs[db].getKeys(after === undefined ? { limit } : { start: after, limit: limit + 1 })) {
      if (key === after) continue
      out.push(key as string)
      if (out.length >= limit) break
    }
    return out
  }

  policyEntries(db: PolicyDb, after: string | undefined, limit: number): Array<{ key: string; value: unknown }> {
    return this.replica.policyEntries(db, after, limit)
  }

  *entries(db: PolicyDb): Iterable<{ key: string; value: unknown }> {
    for (const { key, value } of this.dbs[db].getRange()) yield { key: key as string, value }
  }

  async markFollower(redis: string): Promise<void> {
    await this.replica.markFollower(redis)
  }
  async applyRecords(ops: readonly StoreOp[], position: ReplicaPosition): Promise<void> {
    await this.replica.applyRecords(ops, position)
  }
  async startBootstrap(): Promise<void> {
    await this.replica.startBootstrap()
  }
  async copySnapshot(copies: readonly StoreOp[], changes: readonly StoreOp[]): Promise<number> {
    return await this.replica.copySnapshot(copies, changes)
  }
  async applyBootstrap(ops: readonly StoreOp[]): Promise<void> {
    await this.replica.applyBootstrap(ops)
  }
  async completeReplica(position: ReplicaPosition): Promise<void> {
    await this.replica.completeReplica(position)
  }
  async stopFollowing(state: 'redis-behind'): Promise<void> {
    await this.replica.stopFollowing(state)
  }

  /** Forgets the shared store this store followed, if any (`filterd redis-seed --detach`); whether it did. */
  async detachReplica(): Promise<boolean> {
    return await this.replica.detach()
  }
}

/** The config's initial `/config/` values, as store options (plain data: worker threads get it too). */
export function configuredStoreOptions(config: Readonly<Config>): StoreOptions {
  return {
    safesearchredirect: config.common.safesearchredirect,
    ...(config.demo?.['default-filter'] !== undefined ? { defaultFilter: [...config.demo['default-filter']] } : {})
  }
}

/**
 * The store at `common.db`, with the config's initial `/config/` values: every role opens it
 * this way, so an anonymous address gets the same defaults from the DNS server, the block page
 * and the API before `/config/` is first written.
 */
export function openConfiguredStore(config: Readonly<Config>, options: { readOnly?: boolean } = {}): Store {
  return Store.open(config.common.db, { ...configuredStoreOptions(config), ...options })
}

/**
 * Creates the configured store, empty, when `common.db` holds none yet, so a reader that opens it
 * read-only (the DNS role) starts on a fresh host instead of failing with ENGINE_STORE_OPEN. An
 * empty store is what the api role would create on its first start: no users, the server defaults,
 * no category database (every name forwarded), and readers see what a writer commits later.
 * Returns whether it created one.
 */
export async function createStoreIfMissing(config: Readonly<Config>): Promise<boolean> {
  if (existsSync(join(config.common.db, 'data.mdb'))) return false
  await openConfiguredStore(config).close()
  return true
}
