/**
 * The store's records and the types its two kinds of writer share: a request's writer (`StoreWriter`,
 * engine/store/writer.ts) and the replica's applier (`ReplicaStore`, engine/store/replica.ts).
 */
import type { ScheduledRule } from '../schedule/index.js'
import type { Store } from './index.js'
import type { MetaReach } from './journal.js'

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
  /**
   * Client IDs (DoH path, DoT server name; docs/dns.md "Subscriber identity"), lower case, each one
   * DNS label. Absent in records written before client IDs existed: read it as `[]`.
   */
  client_ids?: string[]
  /** Time-based rules (engine/schedule); absent or empty: none. */
  schedules?: ScheduledRule[]
}

export interface ServerDefaults {
  filter: number[]
  safesearch: boolean
  safeyoutube: boolean
  safesearchredirect: string
  /** Time-based rules of anonymous addresses (engine/schedule). */
  schedules?: ScheduledRule[]
}

export interface UserDefaults {
  filter: number[]
  safesearch: boolean
  safeyoutube: boolean
  /** Time-based rules a new user starts with (engine/schedule). */
  schedules?: ScheduledRule[]
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

export const DB_NAMES = ['users', 'ips', 'lists', 'settings', 'clients', 'usage', 'meta'] as const
export type DbName = (typeof DB_NAMES)[number]

/** The databases that hold policy: what Redis replicates between hosts (engine/replica). */
export const POLICY_DBS = ['users', 'ips', 'lists', 'settings', 'clients'] as const
export type PolicyDb = (typeof POLICY_DBS)[number]

/** Key prefix of delegated prefixes in `ips` (an exact address is its own key). */
export const CIDR_PREFIX = 'cidr:'

/**
 * Key prefix of client IDs in `ips` (client ID → user), beside the addresses they stand in for: an
 * address's canonical text never holds an `i`, so the two never meet, and the mapping travels to
 * other hosts (Redis) and into backups with the rest of `ips`.
 */
export const CLIENT_ID_PREFIX = 'id:'

/**
 * Key prefix of the management API's clients in the `clients` table. They share the table (and so
 * its Redis replication and backups) with the categorization API's clients, whose ids cannot hold
 * a `:` (the end of the id in HTTP Basic): a categorization client can never be looked up, listed
 * or removed under a management API key, nor the other way round. A table of their own would need
 * a new LMDB database, which a read-only reader (the DNS role) cannot open in a store an older
 * version created.
 */
export const API_CLIENT_PREFIX = 'api:'

/** Key prefix of the list subscriptions in `lists` (engine/lists/keys.ts): never a user's or a global list. */
export const SUBSCRIPTION_PREFIX = 'sub:'

export function listKey(scope: ListScope, kind: ListKind): string {
  return scope === null ? `global:${kind}` : `user:${scope}:${kind}`
}

/** Write operations, valid only inside the callback of `Store.write`. */
export interface StoreWriter {
  readonly store: Store
  putUser(user: UserRecord): void
  /** Deletes the user, its address mappings and its lists. */
  deleteUser(id: string): boolean
  /**
   * Maps each address to `userId`, taking it from any other user first (the billing system is the
   * source of truth). Returns the addresses moved and from whom. Addresses must be canonical.
   */
  claimAddresses(userId: string, addresses: readonly string[]): Array<{ address: string; from: string }>
  /** Unmaps addresses (only those that belong to `userId`). */
  releaseAddresses(userId: string, addresses: readonly string[]): void
  /**
   * Makes `ids` (canonical: lower case) exactly the client IDs mapped to `userId`: IDs it no longer
   * lists are unmapped, new ones mapped. An ID another user holds is not taken: those are returned
   * with their owner and nothing is changed (the caller refuses the request).
   */
  setClientIds(userId: string, ids: readonly string[]): Array<{ clientId: string; owner: string }>
  putList(scope: ListScope, kind: ListKind, entries: readonly string[]): void
  /** Writes (or, `value` undefined, deletes) one key of the list subscriptions (`sub:…` in `lists`). */
  putSubscriptionValue(key: string, value: unknown): void
  putServerDefaults(value: ServerDefaults): void
  putUserDefaults(value: UserDefaults): void
  putClient(client: ClientRecord): void
  deleteClient(id: string): boolean
  /** A management API client (`filterd api-client`); `client.id` is the bare id. */
  putApiClient(client: ClientRecord): void
  deleteApiClient(id: string): boolean
  /**
   * A value in `meta` other than the generation (e.g. the active category database version). `reach`
   * says whether a per-address policy snapshot may hold it (engine/store/journal.ts); by default it
   * may, and every reader drops all its snapshots.
   */
  putMeta(key: string, value: unknown, reach?: MetaReach): void
}

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
