/**
 * A bounded cache from key strings to small non-negative integers, held in typed arrays.
 *
 * Why not a Map: the category caches hold a few hundred thousand names. As Map entries they are
 * objects the garbage collector traces on every major collection (tens of megabytes of strings and
 * entries, most of a filterd heap), and under junk traffic every new name is an entry that
 * survives to the old generation and dies there, which makes major collections frequent and their
 * pauses long (docs/reliability.md). In typed arrays the same entries are a few buffers the
 * collector never looks into. A lookup is also cheaper: one probe into a flat table and one byte
 * compare, where a Map must hash a fresh string, then chase an entry and a stored key
 * (bench/results/2026-11-history.md).
 *
 * Eviction is by generations, as before: new keys go to `recent`; when it is full it becomes `older`
 * and the previous `older` is emptied for reuse; a key found in `older` moves back to `recent`. So
 * popular keys survive every turnover, a hit is one or two probes with no bookkeeping, and there is
 * no moment when the whole cache is cold. Holds at most `2 × generation` keys.
 *
 * Keys are stored as latin1 bytes; a key with a character above U+00FF is not cached (lookup keys
 * are normalised names and escaped wire names, ASCII in practice).
 */

/** Returned by `get` for a key the table does not hold. */
export const ABSENT = -1

/** Average key bytes the arena is sized for; a generation whose arena is full counts as full. */
const BYTES_PER_KEY = 48
/** Longest key cached (a DNS name in presentation form with every byte escaped is under 1,100). */
const MAX_KEY_LENGTH = 2048

/**
 * The key hashed last and its hash. A query's name is looked up in several tables one after the other
 * (the policy's global answers, each RPZ feed's names, the category database's), each with the same
 * string: the walk over its characters is done once per query, not once per table.
 */
let lastKey = ''
let lastHash = 0x811c9dc5 | 0 // the empty key's

/** FNV-1a over the key's characters (its latin1 bytes). */
function hashOf(key: string): number {
  // The same string object compares by pointer; an equal copy costs a compare, as cheap as the hash.
  if (key === lastKey) return lastHash
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  lastKey = key
  lastHash = h | 0
  return lastHash
}

/**
 * One generation: an open-addressing index whose slots hold the whole entry (the key's hash, its
 * start in a byte arena, its length and its value, side by side), so a hit touches two cache lines:
 * the slot and the key's bytes. A probe past another key reads only its slot.
 */
class Generation {
  count = 0
  private top = 0
  private readonly mask: number
  /** Per slot: [hash, arena start, length, value]; length 0 is an empty slot (keys are never empty). */
  private readonly slots: Int32Array
  private readonly arena: Uint8Array
  readonly capacity: number

  constructor(capacity: number) {
    this.capacity = capacity
    // At most half the slots are used, so a probe sequence is short.
    let size = 1
    while (size < capacity * 2) size <<= 1
    this.mask = size - 1
    this.slots = new Int32Array(4 * size)
    this.arena = new Uint8Array(capacity * BYTES_PER_KEY)
  }

  /** The slot index × 4 of `key`, or -1. */
  private find(key: string, hash: number): number {
    const slots = this.slots
    for (let s = hash & this.mask; ; s = (s + 1) & this.mask) {
      const at = 4 * s
      const length = slots[at + 2]! // s <= mask, so at + 3 < slots.length
      if (length === 0) return -1
      if (slots[at] === hash && length === key.length && this.same(slots[at + 1]!, key)) return at
    }
  }

  get(key: string, hash: number): number {
    const at = this.find(key, hash)
    return at < 0 ? ABSENT : this.slots[at + 3]! // a slot found
  }

  private same(start: number, key: string): boolean {
    const arena = this.arena
    for (let i = 0; i < key.length; i++) if (arena[start + i] !== key.charCodeAt(i)) return false
    return true
  }

  /** Whether `key` fits (entries and arena bytes): else the generation is full. */
  fits(key: string): boolean {
    return this.count < this.capacity && this.top + key.length <= this.arena.length
  }

  /** Adds `key` (not empty, not present; `fits(key)` is true). */
  add(key: string, hash: number, value: number): void {
    this.count++
    const start = this.top
    const arena = this.arena
    for (let i = 0; i < key.length; i++) arena[start + i] = key.charCodeAt(i)
    this.top += key.length
    let s = hash & this.mask
    while (this.slots[4 * s + 2] !== 0) s = (s + 1) & this.mask
    const at = 4 * s
    this.slots[at] = hash
    this.slots[at + 1] = start
    this.slots[at + 2] = key.length
    this.slots[at + 3] = value
  }

  /** Sets the value of `key`; false when this generation does not hold it. */
  update(key: string, hash: number, value: number): boolean {
    const at = this.find(key, hash)
    if (at < 0) return false
    this.slots[at + 3] = value
    return true
  }

  reset(): void {
    if (this.count === 0) return
    this.slots.fill(0)
    this.count = 0
    this.top = 0
  }
}

export class KeyTable {
  #recent: Generation
  #older: Generation

  /** `entries`: the most it holds (two generations of half that). */
  constructor(entries: number) {
    const generation = Math.max(1, Math.floor(entries / 2))
    this.#recent = new Generation(generation)
    this.#older = new Generation(generation)
  }

  /** The value stored for `key`, or ABSENT. */
  get(key: string): number {
    const hash = hashOf(key)
    const v = this.#recent.get(key, hash)
    if (v !== ABSENT) return v
    const old = this.#older.get(key, hash)
    if (old !== ABSENT) this.#insert(key, hash, old)
    return old
  }

  /** Stores `value` (≥ 0) for `key`; a key with a character above U+00FF is not stored. */
  set(key: string, value: number): void {
    if (key.length === 0 || key.length > MAX_KEY_LENGTH || !isLatin1(key)) return
    const hash = hashOf(key)
    if (!this.#recent.update(key, hash, value)) this.#insert(key, hash, value)
  }

  #insert(key: string, hash: number, value: number): void {
    if (!this.#recent.fits(key)) {
      const emptied = this.#older
      emptied.reset()
      this.#older = this.#recent
      this.#recent = emptied
      if (!emptied.fits(key)) return // longer than a whole generation's arena (a tiny table)
    }
    this.#recent.add(key, hash, value)
  }

  clear(): void {
    this.#recent.reset()
    this.#older.reset()
  }

  get size(): number {
    return this.#recent.count + this.#older.count
  }
}

function isLatin1(key: string): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0xff) return false
  return true
}
