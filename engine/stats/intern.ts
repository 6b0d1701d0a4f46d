/**
 * Byte strings (users, names, reasons of CSV records) numbered by their bytes, with no JavaScript
 * string made per row: the appender import (engine/stats/csv-append.ts) keys its partial aggregates
 * by these numbers. An open-addressing table of FNV-1a hashes; an entry points at its first
 * occurrence (`srcs[src]`, `start`..`end`), which stays alive as long as the import.
 */
export class ByteInterner {
  /** Where each entry's bytes are, by id. */
  src: Int32Array
  start: Int32Array
  end: Int32Array
  private hashes: Int32Array
  /** Slot → id + 1 (0 is free). */
  private slots: Int32Array
  count = 0

  constructor(private readonly srcs: readonly Buffer[]) {
    this.src = new Int32Array(1024)
    this.start = new Int32Array(1024)
    this.end = new Int32Array(1024)
    this.hashes = new Int32Array(1024)
    this.slots = new Int32Array(4096)
  }

  /** The id of the bytes `srcs[src][start..end)`, a new one the first time they are seen. */
  intern(src: number, start: number, end: number): number {
    const b = this.srcs[src]!
    let h = 0x811c9dc5 | 0
    for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193)
    const mask = this.slots.length - 1
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot]! - 1
      if (id < 0) return this.add(slot, h, src, start, end)
      if (this.hashes[id] === h && this.same(id, b, start, end)) return id
    }
  }

  /** The bytes of `id` as a latin1 string (each byte one code unit). */
  latin1(id: number): string {
    return this.srcs[this.src[id]!]!.toString('latin1', this.start[id], this.end[id])
  }

  private same(id: number, b: Buffer, start: number, end: number): boolean {
    const s = this.start[id]!
    if (this.end[id]! - s !== end - start) return false
    const o = this.srcs[this.src[id]!]!
    for (let i = 0; i < end - start; i++) if (o[s + i] !== b[start + i]) return false
    return true
  }

  private add(slot: number, h: number, src: number, start: number, end: number): number {
    const id = this.count++
    if (id === this.src.length) this.growEntries()
    this.src[id] = src
    this.start[id] = start
    this.end[id] = end
    this.hashes[id] = h
    this.slots[slot] = id + 1
    if (this.count * 2 > this.slots.length) this.rehash()
    return id
  }

  private growEntries(): void {
    const grow = (a: Int32Array): Int32Array => {
      const n = new Int32Array(a.length * 2)
      n.set(a)
      return n
    }
    this.src = grow(this.src)
    this.start = grow(this.start)
    this.end = grow(this.end)
    this.hashes = grow(this.hashes)
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2)
    const mask = slots.length - 1
    for (let id = 0; id < this.count; id++) {
      let slot = this.hashes[id]! & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = id + 1
    }
    this.slots = slots
  }
}

/**
 * Pairs of non-negative int32 (a user id and a host id, or a user id and an hour) numbered in order
 * of first sight: the appender import's partial keys, with no JavaScript object or heap number per row.
 */
export class PairIndex {
  private keys: Int32Array = new Int32Array(2048)
  /** Slot → index + 1 (0 is free). */
  private slots: Int32Array = new Int32Array(4096)
  count = 0

  /** The index of (a, b), a new one (== the count before) the first time. */
  indexOf(a: number, b: number): number {
    let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)
    h ^= h >>> 15
    const mask = this.slots.length - 1
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const i = this.slots[slot]! - 1
      if (i < 0) return this.add(slot, a, b)
      if (this.keys[2 * i] === a && this.keys[2 * i + 1] === b) return i
    }
  }

  private add(slot: number, a: number, b: number): number {
    const i = this.count++
    if (2 * i === this.keys.length) {
      const k = new Int32Array(this.keys.length * 2)
      k.set(this.keys)
      this.keys = k
    }
    this.keys[2 * i] = a
    this.keys[2 * i + 1] = b
    this.slots[slot] = i + 1
    if (this.count * 2 > this.slots.length) this.rehash()
    return i
  }

  private rehash(): void {
    const old = this.slots
    const slots = new Int32Array(old.length * 2)
    const mask = slots.length - 1
    for (const v of old) {
      if (v === 0) continue
      const a = this.keys[2 * (v - 1)]!
      const b = this.keys[2 * (v - 1) + 1]!
      let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)
      h ^= h >>> 15
      let slot = h & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = v
    }
    this.slots = slots
  }
}
