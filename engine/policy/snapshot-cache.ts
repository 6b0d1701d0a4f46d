/**
 * The per-address snapshot cache: a fixed number of slots evicted by CLOCK (second chance). A hit sets
 * the slot's bit in a byte array, so the DNS hot path pays one Map lookup and one byte store, no
 * allocation; a miss on a full cache sweeps the hand, clearing bits, to the first slot not used since the
 * hand last passed it (amortised O(1): each bit it clears was set by a hit). A new entry starts with its
 * bit clear, so a flood of addresses seen once replaces itself rather than the addresses that query
 * all the time. A write that changed what an entry holds evicts that entry alone (`delete`, `sweep`);
 * its slot is the next one filled.
 */
/**
 * A cache key: an IPv4 address packed into a 32-bit integer (`ipv4Key`: a small integer V8 keeps in the
 * pointer itself, no string held per address), any other key (an IPv6 address's text, `id:<client ID>`)
 * as it is.
 */
export type CacheKey = number | string

/**
 * `text` as a cache key: a canonical dotted quad (no leading zero, each part 0-255, engine/net/ip.ts) as
 * its 32 bits in a signed integer (every one a small integer on 64-bit V8), anything else unchanged. On a
 * miss the caller looks the text up in the store; a key made of two spellings of one address would mix
 * two lookups' answers, so a non-canonical quad stays text. Parsing costs about what hashing the packet's
 * new address string did, which a number key no longer needs.
 */
export function cacheKey(text: string): CacheKey {
  const n = text.length
  if (n < 7 || n > 15) return text
  let value = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || dots === 3) return text
      value = value * 256 + part
      part = 0
      digits = 0
      dots++
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return text // a leading zero
      part = part * 10 + (c - 48)
      if (part > 255) return text
      digits++
    } else return text
  }
  if (digits === 0 || dots !== 3) return text
  return (value * 256 + part) | 0
}

/** The address text of a packed IPv4 key (the inverse of `cacheKey` for a number). */
export function ipv4Text(key: number): string {
  return `${(key >>> 24) & 255}.${(key >>> 16) & 255}.${(key >>> 8) & 255}.${key & 255}`
}

export class SnapshotCache<V> {
  private readonly capacity: number
  /** Key → slot; a slot's key and value are in `keys` and `values`. */
  private readonly slots = new Map<CacheKey, number>()
  private readonly keys: CacheKey[] = []
  private readonly values: Array<V | undefined> = []
  /** Slots emptied by `delete`, filled before the hand takes a used one. */
  private readonly free: number[] = []
  /** 1 when the slot was read since the hand last passed it; grown with the slots (a large limit costs nothing unused). */
  private used: Uint8Array
  private hand = 0
  /** Entries built and stored since the cache was made (its misses): how often callers rebuilt one. */
  stored = 0

  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity))
    this.used = new Uint8Array(Math.min(this.capacity, 1024))
  }

  get size(): number {
    return this.slots.size
  }

  /** The most entries it holds. */
  get limit(): number {
    return this.capacity
  }

  get(key: CacheKey): V | undefined {
    const slot = this.slots.get(key)
    if (slot === undefined) return undefined
    this.used[slot] = 1
    return this.values[slot]
  }

  set(key: CacheKey, value: V): void {
    this.stored++
    let slot = this.slots.get(key)
    if (slot === undefined) {
      const free = this.free.pop()
      if (free !== undefined) {
        slot = free
        this.keys[slot] = key
        this.values[slot] = value
      } else if (this.keys.length < this.capacity) {
        slot = this.keys.length
        if (slot === this.used.length) this.grow()
        this.keys.push(key)
        this.values.push(value)
      } else {
        slot = this.victim()
        this.slots.delete(this.keys[slot]!)
        this.keys[slot] = key
        this.values[slot] = value
      }
      this.slots.set(key, slot)
    } else this.values[slot] = value
    this.used[slot] = 0
  }

  /** Evicts `key`'s entry, if held. */
  delete(key: CacheKey): void {
    const slot = this.slots.get(key)
    if (slot !== undefined) this.empty(key, slot)
  }

  /** Evicts every entry for which `evict` is true (a walk of the whole cache: for rare changes). */
  sweep(evict: (key: CacheKey, value: V) => boolean): void {
    for (const [key, slot] of this.slots) if (evict(key, this.values[slot]!)) this.empty(key, slot)
  }

  /** Each value held (once per entry). */
  *entries(): Iterable<V> {
    for (const slot of this.slots.values()) yield this.values[slot]!
  }

  private empty(key: CacheKey, slot: number): void {
    this.slots.delete(key)
    // The key stays in `keys` until the slot is reused: the hand never reaches a free slot, as `set`
    // fills every free slot before it asks the hand for a victim.
    this.values[slot] = undefined
    this.used[slot] = 0
    this.free.push(slot)
  }

  clear(): void {
    this.slots.clear()
    this.keys.length = 0
    this.values.length = 0
    this.free.length = 0
    this.used.fill(0)
    this.hand = 0
  }

  private grow(): void {
    const used = new Uint8Array(Math.min(this.capacity, this.used.length * 2))
    used.set(this.used)
    this.used = used
  }

  /** The first slot from the hand whose bit is clear, clearing the bits it passes. */
  private victim(): number {
    const used = this.used
    let h = this.hand
    while (used[h] === 1) {
      used[h] = 0
      h = h + 1 === this.capacity ? 0 : h + 1
    }
    this.hand = h + 1 === this.capacity ? 0 : h + 1
    return h
  }
}
