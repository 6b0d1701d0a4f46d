/**
 * The QNAME triggers of an RPZ feed, packed: owner names as latin1 bytes in one growing arena and an
 * open-addressing index whose slots hold the whole entry (the key's hash, its start in the arena, its
 * length, whether it is a `*.` wildcard, and a small action code), all in typed arrays.
 *
 * Why not a Map: a feed of millions of names as Map entries costs a string, an entry and an action
 * object per name, about 400 bytes each (1.3 GB for 3M records, bench/results/2026-11-history.md), and every one is
 * an object the garbage collector traces. Here a name costs its bytes plus 12 bytes of slot at a load
 * of at most 3/4: about 40 bytes. A lookup reads one slot run and compares bytes in place, taking the
 * key as a suffix of the query name (`from`), so a wildcard walk allocates nothing.
 *
 * Deletion (an IXFR) shifts the following slots back (linear probing needs no tombstones); the
 * deleted key's bytes stay in the arena until they are half of it, then the arena is compacted.
 */

/** Returned by `get` for a key the table does not hold. */
export const NO_CODE = -1
/** Longest key (a relative owner name; DNS names are at most 255 bytes). */
export const MAX_KEY = 1023
const LEN_MASK = 0x3ff
const WILD_BIT = 0x400
const CODE_SHIFT = 11
/** Slots start at this many and double when 3/4 full. */
const MIN_SLOTS = 1024

/** FNV-1a over the characters of `name` from `from`, seeded by the wildcard flag. */
function hashOf(name: string, from: number, wild: boolean): number {
  let h = wild ? 0x050c5d1f : 0x811c9dc5
  for (let i = from; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
  return h | 0
}

/** Whether every character of `key` is a byte (the form names read from the wire take). */
export function isLatin1(key: string): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0xff) return false
  return true
}

export class TriggerTable {
  private mask = MIN_SLOTS - 1
  /** Per slot: [hash, arena start, meta]; meta 0 is an empty slot, else length | wild | (code + 1) << 11. */
  private slots = new Int32Array(3 * MIN_SLOTS)
  private arena = new Uint8Array(64 * 1024)
  private top = 0
  /** Arena bytes of deleted keys. */
  private garbage = 0
  count = 0

  /** Bytes held (slots and arena), for the benchmark's accounting. */
  get bytes(): number {
    return this.slots.byteLength + this.arena.byteLength
  }

  /** The code of the key `name.slice(from)` (a wildcard's key when `wild`), or NO_CODE. */
  get(name: string, from: number, wild: boolean): number {
    const at = this.find(name, from, wild, hashOf(name, from, wild))
    return at < 0 ? NO_CODE : (this.slots[at + 2]! >>> CODE_SHIFT) - 1 // at: a used slot
  }

  /** Sets the code (0..0xfffff) of `key`; the key must be latin1 and at most MAX_KEY long. */
  set(key: string, wild: boolean, code: number): void {
    const hash = hashOf(key, 0, wild)
    const at = this.find(key, 0, wild, hash)
    const meta = key.length | (wild ? WILD_BIT : 0) | ((code + 1) << CODE_SHIFT)
    if (at >= 0) {
      this.slots[at + 2] = meta
      return
    }
    if ((this.count + 1) * 4 > (this.mask + 1) * 3) this.resize((this.mask + 1) * 2)
    const start = this.append(key)
    this.place(hash, start, meta)
    this.count++
  }

  /** Removes `key`; false when it was not there. */
  delete(key: string, wild: boolean): boolean {
    const at = this.find(key, 0, wild, hashOf(key, 0, wild))
    if (at < 0) return false
    this.garbage += key.length
    this.count--
    this.removeSlot(at / 3)
    if (this.garbage > 1 << 20 && this.garbage * 2 > this.top) this.compact()
    return true
  }

  /** Every key with its wildcard flag and code (a copy of each key; for writing the table elsewhere). */
  *entries(): Generator<{ key: string; wild: boolean; code: number }> {
    const slots = this.slots
    for (let at = 0; at < slots.length; at += 3) {
      const meta = slots[at + 2]!
      if (meta === 0) continue
      const start = slots[at + 1]!
      const key = Buffer.from(this.arena.buffer, this.arena.byteOffset + start, meta & LEN_MASK).toString('latin1')
      yield { key, wild: (meta & WILD_BIT) !== 0, code: (meta >>> CODE_SHIFT) - 1 }
    }
  }

  /** The slot offset (× 3) holding the key, or -1. */
  private find(name: string, from: number, wild: boolean, hash: number): number {
    const slots = this.slots
    const length = name.length - from
    const want = length | (wild ? WILD_BIT : 0)
    for (let s = hash & this.mask; ; s = (s + 1) & this.mask) {
      const at = 3 * s
      const meta = slots[at + 2]!
      if (meta === 0) return -1
      if (slots[at] === hash && (meta & (LEN_MASK | WILD_BIT)) === want && this.same(slots[at + 1]!, name, from))
        return at
    }
  }

  private same(start: number, name: string, from: number): boolean {
    const arena = this.arena
    for (let i = from, p = start; i < name.length; i++, p++) if (arena[p] !== name.charCodeAt(i)) return false
    return true
  }

  private place(hash: number, start: number, meta: number): void {
    const slots = this.slots
    let s = hash & this.mask
    while (slots[3 * s + 2] !== 0) s = (s + 1) & this.mask
    slots[3 * s] = hash
    slots[3 * s + 1] = start
    slots[3 * s + 2] = meta
  }

  private append(key: string): number {
    if (this.top + key.length > this.arena.length) {
      // By half again (plus room for a few IXFRs): a trimmed 60 MB arena is not doubled for one name.
      const grown = new Uint8Array(Math.max(Math.ceil(this.arena.length * 1.5), this.top + key.length) + 65536)
      grown.set(this.arena.subarray(0, this.top))
      this.arena = grown
    }
    const start = this.top
    for (let i = 0; i < key.length; i++) this.arena[start + i] = key.charCodeAt(i)
    this.top += key.length
    return start
  }

  /** Empties slot `i` and moves back the entries after it that probed past it (linear probing). */
  private removeSlot(i: number): void {
    const slots = this.slots
    const mask = this.mask
    for (let j = (i + 1) & mask; slots[3 * j + 2] !== 0; j = (j + 1) & mask) {
      const home = slots[3 * j]! & mask
      // Entry j may move to i when its home is not cyclically within (i, j].
      const stays = i <= j ? home > i && home <= j : home > i || home <= j
      if (stays) continue
      slots[3 * i] = slots[3 * j]!
      slots[3 * i + 1] = slots[3 * j + 1]!
      slots[3 * i + 2] = slots[3 * j + 2]!
      i = j
    }
    slots[3 * i] = 0
    slots[3 * i + 1] = 0
    slots[3 * i + 2] = 0
  }

  private resize(size: number): void {
    const old = this.slots
    this.slots = new Int32Array(3 * size)
    this.mask = size - 1
    for (let at = 0; at < old.length; at += 3) if (old[at + 2] !== 0) this.place(old[at]!, old[at + 1]!, old[at + 2]!)
  }

  /**
   * Gives back the arena's unused room (after a build: the arena grew by doubling), keeping 1/64 spare
   * so the IXFRs that follow add names without copying the whole arena.
   */
  trim(): void {
    this.compact(Math.ceil((this.top - this.garbage) / 64) + 65536)
  }

  /** Copies the live keys into a new arena (the slots keep their places, only their starts move). */
  private compact(spare = 65536): void {
    const old = this.arena
    const arena = new Uint8Array(this.top - this.garbage + spare)
    let top = 0
    const slots = this.slots
    for (let at = 0; at < slots.length; at += 3) {
      const meta = slots[at + 2]!
      if (meta === 0) continue
      const start = slots[at + 1]!
      const length = meta & LEN_MASK
      arena.set(old.subarray(start, start + length), top)
      slots[at + 1] = top
      top += length
    }
    this.arena = arena
    this.top = top
    this.garbage = 0
  }
}
