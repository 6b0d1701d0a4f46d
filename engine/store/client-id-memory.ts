/**
 * Which client ID an address was just given the block-page address with, per name: what lets the
 * block page judge a client-ID subscriber (DoH path, DoT server name) as the DNS server did, when the
 * page request comes from an address that belongs to no user (CGNAT, a phone away from home) or to
 * someone else (docs/blockpage.md, "Subscribers known by a client ID").
 *
 * The DNS role writes, the block page reads, and they may be different processes: the memory is an
 * LMDB environment of its own, `client-id-memory/` inside the store's folder (`common.db`), which every
 * process on the host opens. Not the store itself: the DNS role opens the store read-only, and these
 * entries are not policy (they bump no generation and are never replicated to other hosts).
 *
 * Bounded by construction: SLOTS keys, the slot chosen by a hash of (address, name), a later entry
 * overwriting an earlier one of the same slot; an entry also ends `lifetime` after it was written. An
 * entry lost to a collision or expired only means the page judges by the address, as without a client ID.
 *
 * The DNS answer leaves once its entry is committed, so the browser's page request (a millisecond later)
 * finds it. The write is lmdb-js's batched asynchronous put (measured 2.5-10 µs of CPU per entry, 26 µs
 * from put to commit; a `putSync` cost 20-60 µs of the event loop), in an environment opened with
 * `noSync` (no fsync: a crash may lose the last entries, harmless for a memory of seconds). Only block
 * answers to client-ID queries write, and a repeated one only past half its entry's life.
 */
import { open, type Database, type RootDatabase } from 'lmdb'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/** The memory's folder inside the store's folder (`common.db`). */
export const CLIENT_ID_MEMORY_DIR = 'client-id-memory'

/** Keys of the memory: at most this many entries are ever stored (a few MB). */
export const CLIENT_ID_MEMORY_SLOTS = 65_536

/** The shortest life of an entry: a browser asks for the page right after the answer, whatever its TTL. */
export const CLIENT_ID_MEMORY_MIN_SECONDS = 60

/** One slot's value: [address, name, client ID, expiry in ms since the epoch]. */
type Entry = [string, string, string, number]

function isEntry(v: unknown): v is Entry {
  return (
    Array.isArray(v) &&
    v.length === 4 &&
    typeof v[0] === 'string' &&
    typeof v[1] === 'string' &&
    typeof v[2] === 'string' &&
    typeof v[3] === 'number'
  )
}

/** FNV-1a over the address and name (a space cannot occur in either), reduced to a slot. */
function slotOf(address: string, name: string): number {
  let h = 0x811c9dc5
  const key = address + ' ' + name
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % CLIENT_ID_MEMORY_SLOTS
}

export interface ClientIdMemoryOptions {
  /** How long an entry lasts, seconds (the DNS role: its block answers' TTL, at least the minimum). */
  lifetimeSeconds?: number
  now?: () => number
}

export class ClientIdMemory {
  private readonly root: RootDatabase
  private readonly db: Database
  private readonly lifetimeMs: number
  private readonly now: () => number
  /** What this process wrote last per slot and until when: a repeated answer rewrites only past half its life. */
  private readonly written = new Map<number, { key: string; until: number }>()

  private constructor(root: RootDatabase, options: ClientIdMemoryOptions) {
    this.root = root
    this.db = root.openDB({ name: 'entries' })
    this.lifetimeMs = Math.max(options.lifetimeSeconds ?? 0, CLIENT_ID_MEMORY_MIN_SECONDS) * 1000
    this.now = options.now ?? Date.now
  }

  /** Opens (creating) the memory of the store at `storePath`. */
  static open(storePath: string, options: ClientIdMemoryOptions = {}): ClientIdMemory {
    const path = join(storePath, CLIENT_ID_MEMORY_DIR)
    mkdirSync(path, { recursive: true })
    return new ClientIdMemory(open({ path, maxDbs: 2, noSync: true }), options)
  }

  /**
   * Remembers that `address` was answered the block-page address for `name` (lower case, no trailing
   * dot) on a query naming `clientId`. Returns the write's commit (send the answer once it settles), or
   * null when this process wrote the same entry recently enough and nothing is written.
   */
  remember(address: string, name: string, clientId: string): Promise<unknown> | null {
    const now = this.now()
    const slot = slotOf(address, name)
    const key = `${address} ${name} ${clientId}`
    const last = this.written.get(slot)
    if (last !== undefined && last.key === key && last.until - now > this.lifetimeMs / 2) return null
    const until = now + this.lifetimeMs
    const entry: Entry = [address, name, clientId, until]
    if (this.written.size >= CLIENT_ID_MEMORY_SLOTS) this.written.clear()
    this.written.set(slot, { key, until })
    return this.db.put(slot, entry)
  }

  /** The client ID `address` was last given the block page with for `name`, while the entry lives; else undefined. */
  recall(address: string, name: string): string | undefined {
    const v: unknown = this.db.get(slotOf(address, name))
    if (!isEntry(v) || v[0] !== address || v[1] !== name || v[3] <= this.now()) return undefined
    return v[2]
  }

  async close(): Promise<void> {
    await this.root.close()
  }
}
