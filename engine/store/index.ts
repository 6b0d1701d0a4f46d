/**
 * The store: one LMDB environment shared by every role on a host (docs/contract.md, The store).
 *
 * Named databases: `domains`/`urls` (the compiled category tables, owned by engine/categories),
 * `users`, `ips` (address or prefix → user), `lists` (global and per-user black/whitelists),
 * `settings` (`/config/`, `/userconfig/`), `clients` (API credentials: the categorization API's under
 * their id, the management API's under `api:<id>`, see API_CLIENT_PREFIX), `usage`
 * (per-client daily counts) and `meta` (the generation counter).
 *
 * Writes go through `write(fn)`: `fn` runs synchronously inside one LMDB write transaction (so a
 * request either changes everything it meant to or nothing), the generation is bumped in the same
 * transaction, and the returned promise resolves only once the commit is flushed to disk, so an
 * acknowledged API write survives a crash. Readers in other processes (the DNS server) see the
 * commit on their next event turn, when lmdb-js renews its read transaction; they notice policy
 * changes by polling `generation()`, which is one cheap read.
 */
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb'
import { existsSync, mkdirSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { join } from 'node:path'
import type { Config } from '../config/types.js'
import { EngineError } from '../errors.js'
import { cidrContains, ipBytes, parseCidr, type Cidr } from '../net/ip.js'

export { GenerationWatcher, GENERATION_CHECK_MS, type GenerationWatcherOptions } from './generation.js'

export type OnOff = 'on' | 'off'

/** A user as the spec's User object has it, without the lists (stored apart, they can be long). */
export interface UserRecord {
  name: string
  safesearch: OnOff
  safeyoutube: OnOff
  status: 'enabled' | 'disabled'
  filter: number[]
  /** Canonical addresses and prefixes (see engine/net/ip.ts). */
  ip: string[]
}

export interface ServerDefaults {
  filter: number[]
  safesearch: boolean
  safeyoutube: boolean
  safesearchredirect: string
}

export interface UserDefaults {
  filter: number[]
  safesearch: boolean
  safeyoutube: boolean
}

export type ListKind = 'black' | 'white'
/** `null` scope = the global lists. */
export type ListScope = string | null

export interface ClientRecord {
  id: string
  /** scrypt parameters and digest, hex. */
  salt: string
  hash: string
  created: string
  label?: string
}

export interface StoreOptions {
  readOnly?: boolean
  /** Initial `/config/` value of `safesearchredirect`, from the config file. */
  safesearchredirect?: string
  /** Initial `/config/` filter (the demo blocks a few categories out of the box). */
  defaultFilter?: readonly number[]
}

const DB_NAMES = ['users', 'ips', 'lists', 'settings', 'clients', 'usage', 'meta'] as const
type DbName = typeof DB_NAMES[number]

const CIDR_PREFIX = 'cidr:'

/**
 * Key prefix of the management API's clients in the `clients` table. They share the table (and so
 * its Redis replication and backups) with the categorization API's clients, whose ids cannot hold
 * a `:` (the end of the id in HTTP Basic): a categorization client can never be looked up, listed
 * or removed under a management API key, nor the other way round. A table of their own would need
 * a new LMDB database, which a read-only reader (the DNS role) cannot open in a store an older
 * version created.
 */
export const API_CLIENT_PREFIX = 'api:'

function listKey (scope: ListScope, kind: ListKind): string {
  return scope === null ? `global:${kind}` : `user:${scope}:${kind}`
}

/** Write operations, valid only inside the callback of `Store.write`. */
export interface StoreWriter {
  readonly store: Store
  putUser (user: UserRecord): void
  /** Deletes the user, its address mappings and its lists. */
  deleteUser (id: string): boolean
  /**
   * Maps each address to `userId`, taking it from any other user first (the billing system is the
   * source of truth). Returns the addresses moved and from whom. Addresses must be canonical.
   */
  claimAddresses (userId: string, addresses: readonly string[]): Array<{ address: string, from: string }>
  /** Unmaps addresses (only those that belong to `userId`). */
  releaseAddresses (userId: string, addresses: readonly string[]): void
  putList (scope: ListScope, kind: ListKind, entries: readonly string[]): void
  putServerDefaults (value: ServerDefaults): void
  putUserDefaults (value: UserDefaults): void
  putClient (client: ClientRecord): void
  deleteClient (id: string): boolean
  /** A management API client (`filterd api-client`); `client.id` is the bare id. */
  putApiClient (client: ClientRecord): void
  deleteApiClient (id: string): boolean
  /** A value in `meta` other than the generation (e.g. the active category database version). */
  putMeta (key: string, value: unknown): void
}

/** The databases that hold policy: what Redis replicates between hosts (engine/replica). */
export const POLICY_DBS = ['users', 'ips', 'lists', 'settings', 'clients'] as const
export type PolicyDb = typeof POLICY_DBS[number]

/** One physical change to a policy database: `value` undefined deletes the key. */
export type StoreOp = [db: PolicyDb, key: string, value?: unknown]

/**
 * One request's changes for the shared store: the physical key changes it made, and `basis`, the
 * sequence number of the last shared-store record the replica held when the request read it (0
 * without a replica position). The shared store refuses the changes if another host wrote one of
 * those keys after `basis` (engine/replica/commit.ts): the request is then computed again.
 */
export interface RemoteWrite {
  readonly ops: StoreOp[]
  readonly basis: number
}

/**
 * Where policy writes go instead of the local LMDB (engine/replica, when `common.redis-ip` is set):
 * it receives the changes one request made, commits them in the shared store, and resolves once
 * this host's replica has them (or throws, and nothing was written). `again` runs the request once
 * more on the replica as it is now and returns its new changes: the commit calls it when the shared
 * store refused the first ones because another host changed the same keys meanwhile.
 */
export type RemoteCommit = (write: RemoteWrite, again: () => RemoteWrite) => Promise<void>

/** Replication state kept in `meta` by the follower (engine/replica), written with the changes. */
export interface ReplicaPosition {
  /** The shared store's identity: a replica never follows another store's stream. */
  epoch: string
  /** Last applied stream entry id and its sequence number. */
  id: string
  seq: number
}

/** Thrown to roll back the recording transaction of a remote write (never seen outside). */
class Rollback extends Error {}
const ROLLBACK = new Rollback('rollback')

/** How long `readSnapshot()` keeps one read transaction. */
export const SNAPSHOT_MAX_AGE_MS = 1000

export class Store {
  readonly root: RootDatabase
  readonly path: string
  private readonly dbs: Record<DbName, Database>
  private readonly initialRedirect: string
  private readonly initialFilter: readonly number[]
  private cidrGeneration = -1
  private cidrs: Array<{ cidr: Cidr, user: string }> = []
  private snapshot: Transaction | undefined = undefined
  private snapshotAt = 0
  private snapshotSweep: NodeJS.Timeout | undefined = undefined
  private remote: RemoteCommit | undefined = undefined
  /** Changes recorded by the writer while a remote write runs its callback. */
  private recording: StoreOp[] | undefined = undefined

  private constructor (path: string, root: RootDatabase, options: StoreOptions) {
    this.path = path
    this.root = root
    this.initialRedirect = options.safesearchredirect ?? ''
    this.initialFilter = options.defaultFilter ?? []
    const dbs: Partial<Record<DbName, Database>> = {}
    for (const name of DB_NAMES) dbs[name] = root.openDB({ name })
    this.dbs = dbs as Record<DbName, Database>
  }

  /** Opens (creating when writable) the environment at `path`. */
  static open (path: string, options: StoreOptions = {}): Store {
    try {
      if (options.readOnly !== true) mkdirSync(path, { recursive: true })
      const root = open({ path, maxDbs: 64, readOnly: options.readOnly === true })
      return new Store(path, root, options)
    } catch (err) {
      throw new EngineError('ENGINE_STORE_OPEN', `cannot open the store at ${path}: ${(err as Error).message}`, { cause: err })
    }
  }

  async close (): Promise<void> {
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
  readSnapshot (): Transaction {
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
  get holdsSnapshot (): boolean {
    return this.snapshot !== undefined
  }

  /** Lets the snapshot go; the next `readSnapshot()` starts a current one (after a new table appears, say). */
  releaseSnapshot (): void {
    const t = this.snapshot
    this.snapshot = undefined
    t?.done()
  }

  /** The policy generation: bumped by every write; readers drop cached policy when it moves. */
  generation (): number {
    const g: unknown = this.dbs.meta.get('generation')
    return typeof g === 'number' ? g : 0
  }

  getMeta (key: string): unknown {
    return this.dbs.meta.get(key)
  }

  getUser (id: string): UserRecord | undefined {
    return this.dbs.users.get(id) as UserRecord | undefined
  }

  hasUser (id: string): boolean {
    return this.dbs.users.doesExist(id)
  }

  /** Users in key order (stable), `start` inclusive, `stop` exclusive. */
  listUsers (start = 0, stop = start + 100): UserRecord[] {
    const out: UserRecord[] = []
    if (stop <= start) return out
    for (const { value } of this.dbs.users.getRange({ offset: start, limit: stop - start })) out.push(value as UserRecord)
    return out
  }

  /** Every user id in key order. */
  * userIds (): Iterable<string> {
    for (const key of this.dbs.users.getKeys()) yield key as string
  }

  * users (): Iterable<UserRecord> {
    for (const { value } of this.dbs.users.getRange()) yield value as UserRecord
  }

  userCount (): number {
    return this.dbs.users.getCount()
  }

  /** Number of address and prefix entries mapped to users. */
  addressCount (): number {
    return this.dbs.ips.getCount()
  }

  /** The user an exact canonical address or prefix entry is mapped to. */
  ownerOf (address: string): string | undefined {
    const key = address.includes('/') ? CIDR_PREFIX + address : address
    return this.dbs.ips.get(key) as string | undefined
  }

  /**
   * The user owning `address` (canonical text): an exact mapping first, then the longest
   * matching delegated prefix. Prefixes are few; they are reloaded when the generation moves.
   */
  userForAddress (address: string, bytes?: Uint8Array): string | undefined {
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

  private loadCidrs (generation: number): void {
    const list: Array<{ cidr: Cidr, user: string }> = []
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
  usersWithPrefix (prefix: string, limit: number): UserRecord[] {
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
  addressesWithPrefix (prefix: string, limit: number): Array<{ address: string, user: string }> {
    const out: Array<{ address: string, user: string }> = []
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

  getList (scope: ListScope, kind: ListKind): string[] {
    return (this.dbs.lists.get(listKey(scope, kind)) as string[] | undefined) ?? []
  }

  getServerDefaults (): ServerDefaults {
    const v = this.dbs.settings.get('config') as ServerDefaults | undefined
    return v ?? { filter: [...this.initialFilter], safesearch: false, safeyoutube: false, safesearchredirect: this.initialRedirect }
  }

  getUserDefaults (): UserDefaults {
    const v = this.dbs.settings.get('userconfig') as UserDefaults | undefined
    return v ?? { filter: [], safesearch: false, safeyoutube: false }
  }

  /** A categorization API client (never a management API one: those ids hold no `:`). */
  getClient (id: string): ClientRecord | undefined {
    if (id.includes(':')) return undefined
    return this.dbs.clients.get(id) as ClientRecord | undefined
  }

  /** The categorization API's clients, in id order. */
  * clients (): Iterable<ClientRecord> {
    for (const { key, value } of this.dbs.clients.getRange()) {
      if (!(key as string).startsWith(API_CLIENT_PREFIX)) yield value as ClientRecord
    }
  }

  /** A management API client by its bare id. */
  getApiClient (id: string): ClientRecord | undefined {
    return this.dbs.clients.get(API_CLIENT_PREFIX + id) as ClientRecord | undefined
  }

  /** The management API's clients, in id order. */
  * apiClients (): Iterable<ClientRecord> {
    // `api;` is the key right after every `api:…` one.
    for (const { value } of this.dbs.clients.getRange({ start: API_CLIENT_PREFIX, end: 'api;' })) yield value as ClientRecord
  }

  /** The `usage` database: per-client daily counters, keyed by the catapi role. */
  get usage (): Database {
    return this.dbs.usage
  }

  /** A user as `/userconfig/` says a new user starts. */
  newUser (id: string): UserRecord {
    const d = this.getUserDefaults()
    return {
      name: id,
      safesearch: d.safesearch ? 'on' : 'off',
      safeyoutube: d.safeyoutube ? 'on' : 'off',
      status: 'enabled',
      filter: [...d.filter],
      ip: []
    }
  }

  /**
   * Runs `fn` in one write transaction, bumps the generation, and resolves with its result once
   * the commit is durable. If `fn` throws, nothing it did is committed and the error propagates.
   */
  async write<T> (fn: (w: StoreWriter) => T): Promise<T> {
    if (this.remote !== undefined) return await this.writeRemote(fn, this.remote)
    const writer = this.writer()
    // A child transaction, so that a throw from `fn` rolls back what it already wrote: a plain
    // async transaction commits the puts made before the throw.
    const result = await this.root.childTransaction(() => {
      const r = fn(writer)
      // Inside a transaction a put applies at once; its promise reports the commit, as the transaction's does.
      void this.dbs.meta.put('generation', this.generation() + 1)
      return r
    })
    await this.root.flushed
    return result
  }

  /**
   * Sends policy writes to `commit` instead of committing them here (a host of several sharing one
   * Redis): `write(fn)` runs `fn` on the local replica in a write transaction that is rolled back,
   * records the key-level changes it made, and hands them to `commit`. Writes touching only `meta`
   * (the category database's active version, which is per host) still commit locally.
   */
  useRemoteCommit (commit: RemoteCommit | undefined): void {
    this.remote = commit
  }

  /**
   * Remote writes run concurrently, each computed on the replica as it is when it starts: two that
   * change the same key are ordered by the shared store's conflict check (the later one is computed
   * again on a replica holding the earlier, engine/replica/commit.ts), as two hosts' writes are.
   */
  private async writeRemote<T> (fn: (w: StoreWriter) => T, commit: RemoteCommit): Promise<T> {
    let result: T | undefined
    // Runs `fn` on the replica in a write transaction that is rolled back (the replica changes
    // only when the follower applies the shared store's record), recording its key changes and
    // the replica's position it read. A request that changes no policy (meta only) commits here.
    const attempt = (): RemoteWrite => {
      const ops: StoreOp[] = []
      let basis = 0
      try {
        this.root.transactionSync(() => {
          basis = this.replicaPosition()?.seq ?? 0
          this.recording = ops
          try {
            result = fn(this.writer())
          } finally {
            this.recording = undefined
          }
          if (ops.length > 0) throw ROLLBACK
          this.dbs.meta.putSync('generation', this.generation() + 1)
        })
      } catch (err) {
        if (err !== ROLLBACK) throw err
      }
      return { ops, basis }
    }
    const first = attempt()
    if (first.ops.length > 0) await commit(first, attempt)
    else await this.root.flushed
    return result as T
  }

  /** `replica.state` as the follower last recorded it ('bootstrapping' while a bootstrap is incomplete). */
  replicaState (): string | undefined {
    return this.dbs.meta.get('replica.state') as string | undefined
  }

  /** The follower's last applied position, or undefined before the first bootstrap. */
  replicaPosition (): ReplicaPosition | undefined {
    return this.dbs.meta.get('replica') as ReplicaPosition | undefined
  }

  /**
   * Applies changes from the shared store (engine/replica) in one transaction that also bumps the
   * generation and records `position`, so a kill mid-apply leaves neither and the follower resumes
   * from the previous position. `clear` empties the policy databases first; `forget` drops the
   * recorded position (a bootstrap under way); `state` is stored as `replica.state` for health
   * reports. `copies` (a bootstrap's keys unchanged since its snapshot) are written before `ops`,
   * each only where the replica does not already hold that value (HSCAN may return a key twice, and
   * a replica bootstrapped in place holds most of them); resolves to the number of copies skipped.
   */
  async applyReplicated (ops: readonly StoreOp[], position: ReplicaPosition | undefined,
    extra: { clear?: boolean, forget?: boolean, state?: string, durable?: boolean, copies?: readonly StoreOp[] } = {}): Promise<number> {
    let skipped = 0
    // A child transaction: a throw midway rolls back what it wrote (see write()).
    await this.root.childTransaction(() => {
      if (extra.clear === true) {
        for (const name of POLICY_DBS) this.dbs[name].clearSync()
      }
      if (extra.clear === true || extra.forget === true) this.dbs.meta.removeSync('replica')
      for (const [db, key, value] of extra.copies ?? []) {
        const d = this.dbs[db]
        if (isDeepStrictEqual(d.get(key), value)) skipped++
        else d.putSync(key, value)
      }
      for (const [db, key, value] of ops) {
        const d = this.dbs[db]
        if (value === undefined || value === null) d.removeSync(key)
        else d.putSync(key, value)
      }
      this.dbs.meta.putSync('generation', this.generation() + 1)
      if (position !== undefined) this.dbs.meta.putSync('replica', position)
      if (extra.state !== undefined) this.dbs.meta.putSync('replica.state', extra.state)
    })
    if (extra.durable !== false) await this.root.flushed
    return skipped
  }

  /** Up to `limit` keys of a policy database after `after` (all from the start without it), in order. */
  policyKeys (db: PolicyDb, after: string | undefined, limit: number): string[] {
    const out: string[] = []
    for (const key of this.dbs[db].getKeys(after === undefined ? { limit } : { start: after, limit: limit + 1 })) {
      if (key === after) continue
      out.push(key as string)
      if (out.length >= limit) break
    }
    return out
  }

  /** Every key and value of one policy database (a seed of the shared store from this replica). */
  * entries (db: PolicyDb): Iterable<{ key: string, value: unknown }> {
    for (const { key, value } of this.dbs[db].getRange()) yield { key: key as string, value }
  }

  private writer (): StoreWriter {
    const rec = this.recording
    const wrap = (name: PolicyDb): Database => {
      const d = this.dbs[name]
      if (rec === undefined) return d
      // Only putSync and removeSync are used by the writer below; they are recorded as they happen.
      return Object.assign(Object.create(d) as Database, {
        putSync: (key: string, value: unknown) => { rec.push([name, key, value]); return d.putSync(key, value) },
        removeSync: (key: string) => { rec.push([name, key]); return d.removeSync(key) }
      })
    }
    const users = wrap('users')
    const ips = wrap('ips')
    const lists = wrap('lists')
    const settings = wrap('settings')
    const clients = wrap('clients')
    const { meta } = this.dbs
    const keyOf = (a: string): string => a.includes('/') ? CIDR_PREFIX + a : a
    return {
      store: this,
      putUser (user) { users.putSync(user.name, user) },
      deleteUser (id) {
        const user = users.get(id) as UserRecord | undefined
        if (user === undefined) return false
        for (const a of user.ip) if (ips.get(keyOf(a)) === id) ips.removeSync(keyOf(a))
        lists.removeSync(listKey(id, 'black'))
        lists.removeSync(listKey(id, 'white'))
        users.removeSync(id)
        return true
      },
      claimAddresses (userId, addresses) {
        const moved: Array<{ address: string, from: string }> = []
        for (const a of addresses) {
          const owner = ips.get(keyOf(a)) as string | undefined
          if (owner !== undefined && owner !== userId) {
            moved.push({ address: a, from: owner })
            const prev = users.get(owner) as UserRecord | undefined
            if (prev !== undefined) users.putSync(owner, { ...prev, ip: prev.ip.filter((x) => x !== a) })
          }
          ips.putSync(keyOf(a), userId)
        }
        return moved
      },
      releaseAddresses (userId, addresses) {
        for (const a of addresses) if (ips.get(keyOf(a)) === userId) ips.removeSync(keyOf(a))
      },
      putList (scope, kind, entries) {
        if (entries.length === 0) lists.removeSync(listKey(scope, kind))
        else lists.putSync(listKey(scope, kind), [...entries])
      },
      putServerDefaults (value) { settings.putSync('config', value) },
      putUserDefaults (value) { settings.putSync('userconfig', value) },
      putClient (client) {
        if (client.id.includes(':')) throw new Error('a categorization API client id holds no ":"')
        clients.putSync(client.id, client)
      },
      deleteClient (id) { return !id.includes(':') && clients.removeSync(id) },
      putApiClient (client) { clients.putSync(API_CLIENT_PREFIX + client.id, client) },
      deleteApiClient (id) { return clients.removeSync(API_CLIENT_PREFIX + id) },
      putMeta (key, value) {
        if (key === 'generation') throw new Error('the generation is bumped by write() itself')
        meta.putSync(key, value)
      }
    }
  }
}

/** The config's initial `/config/` values, as store options (plain data: worker threads get it too). */
export function configuredStoreOptions (config: Readonly<Config>): StoreOptions {
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
export function openConfiguredStore (config: Readonly<Config>, options: { readOnly?: boolean } = {}): Store {
  return Store.open(config.common.db, { ...configuredStoreOptions(config), ...options })
}

/**
 * Creates the configured store, empty, when `common.db` holds none yet, so a reader that opens it
 * read-only (the DNS role) starts on a fresh host instead of failing with ENGINE_STORE_OPEN. An
 * empty store is what the api role would create on its first start: no users, the server defaults,
 * no category database (every name forwarded), and readers see what a writer commits later.
 * Returns whether it created one.
 */
export async function createStoreIfMissing (config: Readonly<Config>): Promise<boolean> {
  if (existsSync(join(config.common.db, 'data.mdb'))) return false
  await openConfiguredStore(config).close()
  return true
}
