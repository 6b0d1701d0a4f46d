/**
 * How many subscription entries list a name, by what they make of it (white, black, a category), held
 * under a 32-bit hash of the name in typed arrays: the policy asks whether a suffix may be listed and
 * reads the store for the exact answer only when it may (engine/lists/policy-index.ts). A million listed
 * names cost about 20 MB of buffers the garbage collector never walks, in every process that judges,
 * where a Map of the names held about 110 MB of strings and table in each.
 *
 * Two names with one hash share a slot and their counts add up: the store read tells them apart, so a
 * collision costs a read, never a wrong answer. Open addressing, linear probing, at most two thirds
 * full; a slot whose counts all reach 0 is taken out by backward shift, so no tombstones pile up.
 */

/** What an entry makes of its name: the three counts a slot keeps. */
export const WHITE = 0
export const BLACK = 1
export const CATEGORY = 2
export type CountKind = typeof WHITE | typeof BLACK | typeof CATEGORY
const KINDS = 3
const MIN_SLOTS = 16

export class NameCounts {
  private hashes = new Int32Array(MIN_SLOTS)
  /** KINDS counts a slot; a slot is free when all of them are 0. */
  private counts = new Uint16Array(KINDS * MIN_SLOTS)
  private used = 0
  private readonly totals = [0, 0, 0]

  /** Slots in use (distinct hashes listed). */
  get size(): number {
    return this.used
  }

  /** Entries of `kind` counted, over every name. */
  total(kind: CountKind): number {
    return this.totals[kind]!
  }

  /** Whether an entry of `kind` may list a name hashing to `hash` (a hash another name shares counts too). */
  has(hash: number, kind: CountKind): boolean {
    const slot = this.find(hash)
    return slot >= 0 && this.counts[KINDS * slot + kind]! > 0
  }

  /** Counts `by` (+1 or -1) entries of `kind` for a name hashing to `hash`. */
  add(hash: number, kind: CountKind, by: number): void {
    let slot = this.find(hash)
    if (slot < 0) {
      if (by <= 0) return
      if (3 * (this.used + 1) > 2 * this.hashes.length) this.grow()
      slot = this.place(hash)
      this.used++
    }
    const at = KINDS * slot + kind
    const before = this.counts[at]!
    const after = Math.max(0, Math.min(0xffff, before + by))
    this.counts[at] = after
    this.totals[kind]! += after - before
    if (!this.occupied(slot)) this.remove(slot)
  }

  /** Forgets every count and gives the memory back. */
  clear(): void {
    this.hashes = new Int32Array(MIN_SLOTS)
    this.counts = new Uint16Array(KINDS * MIN_SLOTS)
    this.used = 0
    this.totals.fill(0)
  }

  private occupied(slot: number): boolean {
    const c = this.counts
    return c[KINDS * slot]! + c[KINDS * slot + 1]! + c[KINDS * slot + 2]! > 0
  }

  private find(hash: number): number {
    const mask = this.hashes.length - 1
    for (let i = hash & mask; this.occupied(i); i = (i + 1) & mask) if (this.hashes[i] === hash) return i
    return -1
  }

  /** The first free slot from `hash`'s home, given the hash (its counts are still 0). */
  private place(hash: number): number {
    const mask = this.hashes.length - 1
    let i = hash & mask
    while (this.occupied(i)) i = (i + 1) & mask
    this.hashes[i] = hash
    return i
  }

  /** Empties `hole` (its counts are 0): each later slot of the run that may sit earlier moves into it. */
  private remove(hole: number): void {
    const mask = this.hashes.length - 1
    for (let j = (hole + 1) & mask; this.occupied(j); j = (j + 1) & mask) {
      const home = this.hashes[j]! & mask
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        this.hashes[hole] = this.hashes[j]!
        this.counts.copyWithin(KINDS * hole, KINDS * j, KINDS * j + KINDS)
        this.counts.fill(0, KINDS * j, KINDS * j + KINDS)
        hole = j
      }
    }
    this.used--
  }

  private grow(): void {
    const hashes = this.hashes
    const counts = this.counts
    this.hashes = new Int32Array(hashes.length * 2)
    this.counts = new Uint16Array(counts.length * 2)
    for (let s = 0; s < hashes.length; s++) {
      if (counts[KINDS * s]! + counts[KINDS * s + 1]! + counts[KINDS * s + 2]! === 0) continue
      const slot = this.place(hashes[s]!)
      this.counts.set(counts.subarray(KINDS * s, KINDS * s + KINDS), KINDS * slot)
    }
  }
}
