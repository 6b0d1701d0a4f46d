/**
 * The per-address snapshot cache: a fixed number of slots evicted by CLOCK (second chance). A hit sets
 * the slot's bit in a byte array, so the DNS hot path pays one hash probe and one byte store, no
 * allocation; a miss on a full cache sweeps the hand, clearing bits, to the first slot not used since the
 * hand last passed it (amortised O(1): each bit it clears was set by a hit). A new entry starts with its
 * bit clear, so a flood of addresses seen once replaces itself rather than the addresses that query
 * all the time. A write that changed what an entry holds evicts that entry alone (`delete`, `sweep`);
 * its slot is the next one filled.
 *
 * Memory is what an ISP host's process runs out of (a million addresses cached in each), so an address
 * is no JS object: its key is its bits in typed arrays (an IPv4 address one 32-bit word, an IPv6 address
 * four), found through an open-addressing index of slot numbers (linear probing, deletion by backward
 * shift, so no tombstones pile up under the churn of CLOCK), and its value one array element pointing at
 * a snapshot its owner's other addresses share. About 30 bytes an address where a Map entry, a key
 * string and two array elements took 80-130 (bench/results/2026-12-06-snapshot-memory.md). Any other
 * key (a client ID's `id:<id>`, an address not in canonical text) is rare and kept in a Map beside.
 */
import { formatIp } from '../net/index.js'
import { indexSize, placeEntry, removeEntry } from './open-index.js'

/** What a key's text is: the words `readAddressKey` writes mean an address only for the first two. */
export const KEY_IPV4 = 1
export const KEY_IPV6 = 2
/** Anything else: a client ID's key, an address not in canonical text. */
export const KEY_TEXT = 3
export type KeyKind = typeof KEY_IPV4 | typeof KEY_IPV6 | typeof KEY_TEXT

/** A slot no entry holds (never filled, or emptied by `delete`). */
const KEY_NONE = 0

/**
 * Reads `text` as an address key into `words` (four 32-bit words, borrowed): a canonical dotted quad
 * (no leading zero, each part 0-255, engine/net/ip.ts) as its 32 bits in `words[0]`, canonical IPv6
 * text (RFC 5952, as formatIp writes it) as its 128 bits, most significant word first. Anything else is
 * KEY_TEXT and stays text: on a miss the caller looks the text up in the store, and a key shared by two
 * spellings of one address would mix two lookups' answers. Parsing costs about what hashing the packet's
 * new address string did, which a number key no longer needs.
 */
export function readAddressKey(text: string, words: Int32Array): KeyKind {
  const n = text.length
  if (n < 2 || n > 39) return KEY_TEXT
  const c = text.charCodeAt(1)
  // An IPv4 address has a dot or a digit second; an IPv6 address a colon or a hex digit.
  return n <= 15 && (c === 46 || (c >= 48 && c <= 57)) && readIpv4(text, words)
    ? KEY_IPV4
    : readIpv6(text, words)
      ? KEY_IPV6
      : KEY_TEXT
}

function readIpv4(text: string, words: Int32Array): boolean {
  const n = text.length
  if (n < 7) return false
  let value = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || dots === 3) return false
      value = value * 256 + part
      part = 0
      digits = 0
      dots++
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return false // a leading zero
      part = part * 10 + (c - 48)
      if (part > 255) return false
      digits++
    } else return false
  }
  if (digits === 0 || dots !== 3) return false
  words[0] = (value * 256 + part) | 0
  words[1] = 0
  words[2] = 0
  words[3] = 0
  return true
}

/** Groups of IPv6 text read by readIpv6 (scratch: one module-level array, no allocation a call). */
const groups = new Uint16Array(8)

/**
 * Canonical IPv6 text into `words`: lower-case hex groups without leading zeros, `::` for the longest
 * run of two or more zero groups (the first on a tie) and nowhere else, no dotted quad (formatIp writes
 * an IPv4-mapped peer as the quad).
 */
function readIpv6(text: string, words: Int32Array): boolean {
  const n = text.length
  let count = 0 // groups read
  let gap = -1 // groups before the `::`
  let value = 0
  let digits = 0
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 58) {
      const hadGroup = digits > 0
      if (hadGroup) {
        if (count === 8) return false
        groups[count++] = value
        value = 0
        digits = 0
      }
      if (i + 1 < n && text.charCodeAt(i + 1) === 58) {
        if (gap >= 0 || (!hadGroup && i !== 0)) return false // a second `::`, or `:::`
        gap = count
        i++
      } else if (!hadGroup || i + 1 === n) return false // a single colon first, last or after another
    } else {
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1
      if (d < 0 || digits === 4 || (digits > 0 && value === 0)) return false // not hex, too long, a leading zero
      value = value * 16 + d
      digits++
    }
  }
  if (digits > 0) {
    if (count === 8) return false
    groups[count++] = value
  }
  const zeros = 8 - count
  if (gap < 0 ? zeros !== 0 : zeros < 2) return false
  // Canonical only if the `::` stands for the first longest zero run: no zero group beside it, and no
  // run of two or more written out that is as long (before it) or longer (after it).
  for (let i = 0; i < count;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < count && groups[j] === 0) j++
    if (gap >= 0 && i <= gap && gap <= j) return false // beside the `::` (or around it)
    if (j - i >= 2 && (gap < 0 || (i < gap ? j - i >= zeros : j - i > zeros))) return false
    i = j
  }
  for (let w = 0; w < 4; w++) {
    const hi = groupAt(2 * w, gap, zeros)
    const lo = groupAt(2 * w + 1, gap, zeros)
    words[w] = (hi << 16) | lo
  }
  return true
}

/** Group `g` of the address whose `count` groups read are in `groups`, `zeros` of them elided at `gap`. */
function groupAt(g: number, gap: number, zeros: number): number {
  if (gap < 0 || g < gap) return groups[g]!
  return g < gap + zeros ? 0 : groups[g - zeros]!
}

/** The address text of a packed IPv4 key (`words[0]` of KEY_IPV4). */
export function ipv4Text(key: number): string {
  return `${(key >>> 24) & 255}.${(key >>> 16) & 255}.${(key >>> 8) & 255}.${key & 255}`
}

/** The canonical text of the IPv6 address in `words[at..at+3]`. */
function ipv6Text(words: Int32Array, at: number): string {
  const bytes = new Uint8Array(16)
  for (let w = 0; w < 4; w++) {
    const v = words[at + w]!
    bytes[4 * w] = v >>> 24
    bytes[4 * w + 1] = (v >>> 16) & 255
    bytes[4 * w + 2] = (v >>> 8) & 255
    bytes[4 * w + 3] = v & 255
  }
  return formatIp(bytes)
}

const INITIAL_SLOTS = 1024

export class SnapshotCache<V> {
  private readonly capacity: number
  /** What each slot's key is (KEY_NONE when empty) and its words, four a slot (grown with the slots to the limit). */
  private kinds = new Uint8Array(0)
  private words = new Int32Array(0)
  /** 1 when the slot was read since the hand last passed it. */
  private used = new Uint8Array(0)
  private readonly values: Array<V | undefined> = []
  /** Open addressing over the address keys: slot + 1 at each position, 0 where none. */
  private index = new Int32Array(0)
  private mask = 0
  /** Keys of KEY_TEXT, and back from their slots (for the hand's victims). */
  private readonly texts = new Map<string, number>()
  private readonly textOf = new Map<number, string>()
  /** Slots emptied by `delete`, filled before the hand takes a used one. */
  private readonly free: number[] = []
  /** Slots ever filled: the next fresh one. */
  private filled = 0
  private live = 0
  private hand = 0
  /** The key being looked up, as `readAddressKey` reads it, and its kind. */
  private readonly key = new Int32Array(4)
  private keyKind = KEY_NONE
  /** Entries built and stored since the cache was made (its misses): how often callers rebuilt one. */
  stored = 0

  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity))
    this.clear()
  }

  get size(): number {
    return this.live
  }

  /** The most entries it holds. */
  get limit(): number {
    return this.capacity
  }

  /** The entry of `key` (an address's text, or any other key such as a client ID's `id:<id>`). */
  get(key: string): V | undefined {
    const slot = this.find(key)
    if (slot < 0) return undefined
    this.used[slot] = 1
    return this.values[slot]
  }

  set(key: string, value: V): void {
    this.stored++
    let slot = this.find(key)
    if (slot < 0) {
      const kind = this.keyKind
      slot = this.take()
      this.live++
      this.kinds[slot] = kind
      if (kind === KEY_TEXT) {
        this.texts.set(key, slot)
        this.textOf.set(slot, key)
      } else {
        this.words.set(this.key, 4 * slot)
        this.place(slot)
      }
    }
    this.values[slot] = value
    this.used[slot] = 0
  }

  /** Evicts `key`'s entry, if held. */
  delete(key: string): void {
    const slot = this.find(key)
    if (slot >= 0) this.empty(slot)
  }

  /**
   * Evicts every entry for which `evict` is true, given the entry's key as text (an address in its
   * canonical form). A walk of the whole cache that makes a string a key: for rare changes.
   */
  sweep(evict: (key: string, value: V) => boolean): void {
    for (let slot = 0; slot < this.filled; slot++) {
      const kind = this.kinds[slot]!
      if (kind === KEY_NONE) continue
      const key =
        kind === KEY_IPV4
          ? ipv4Text(this.words[4 * slot]!)
          : kind === KEY_IPV6
            ? ipv6Text(this.words, 4 * slot)
            : this.textOf.get(slot)!
      if (evict(key, this.values[slot]!)) this.empty(slot)
    }
  }

  /** Each value held (once per entry). */
  *entries(): Iterable<V> {
    for (let slot = 0; slot < this.filled; slot++) if (this.kinds[slot] !== KEY_NONE) yield this.values[slot]!
  }

  /** Drops every entry and gives the memory back: the slots grow again as addresses query. */
  clear(): void {
    const slots = Math.min(this.capacity, INITIAL_SLOTS)
    this.kinds = new Uint8Array(slots)
    this.words = new Int32Array(4 * slots)
    this.used = new Uint8Array(slots)
    this.index = new Int32Array(indexSize(slots))
    this.mask = this.index.length - 1
    this.values.length = 0
    this.texts.clear()
    this.textOf.clear()
    this.free.length = 0
    this.filled = 0
    this.live = 0
    this.hand = 0
  }

  /** The slot holding `key`, or -1; its kind is left in `keyKind`, an address's words in `key`. */
  private find(key: string): number {
    const kind = readAddressKey(key, this.key)
    this.keyKind = kind
    return kind === KEY_TEXT ? (this.texts.get(key) ?? -1) : this.slotOf(kind)
  }

  /** The slot holding the address key in `this.key` of `kind`, or -1. */
  private slotOf(kind: number): number {
    const k = this.key
    const k0 = k[0]!
    const k1 = k[1]!
    const k2 = k[2]!
    const k3 = k[3]!
    const index = this.index
    const kinds = this.kinds
    const words = this.words
    for (let i = hash(k0, k1, k2, k3) & this.mask; ; i = (i + 1) & this.mask) {
      const s = index[i]!
      if (s === 0) return -1
      const slot = s - 1
      const w = 4 * slot
      if (words[w] === k0 && kinds[slot] === kind && words[w + 1] === k1 && words[w + 2] === k2 && words[w + 3] === k3)
        return slot
    }
  }

  /** The hash of the address key in `slot`. */
  private hashOf(slot: number): number {
    const w = this.words
    const at = 4 * slot
    return hash(w[at]!, w[at + 1]!, w[at + 2]!, w[at + 3]!)
  }

  /** Puts `slot`'s address key in the index (not there yet). */
  private place(slot: number): void {
    placeEntry(this.index, this.hashOf(slot), slot)
  }

  /** Takes `slot`'s address key out of the index. */
  private unplace(slot: number): void {
    removeEntry(this.index, this.hashOf(slot), slot, this.rehash)
  }

  private readonly rehash = (slot: number): number => this.hashOf(slot)

  /** A slot for a new entry: a freed one, a fresh one (growing the arrays), or the hand's victim emptied. */
  private take(): number {
    const free = this.free.pop()
    if (free !== undefined) return free
    if (this.filled < this.capacity) {
      if (this.filled === this.kinds.length) this.grow()
      return this.filled++
    }
    const slot = this.victim()
    this.forget(slot)
    this.live--
    return slot
  }

  /** Removes `slot`'s key from where it is found (the index or the text map); its value stays until overwritten. */
  private forget(slot: number): void {
    if (this.kinds[slot] === KEY_TEXT) {
      this.texts.delete(this.textOf.get(slot)!)
      this.textOf.delete(slot)
    } else this.unplace(slot)
    this.kinds[slot] = KEY_NONE
  }

  private empty(slot: number): void {
    this.forget(slot)
    this.values[slot] = undefined
    this.used[slot] = 0
    this.live--
    // The hand never reaches a free slot: `set` fills every free slot before it asks the hand for a victim.
    this.free.push(slot)
  }

  /** Doubles the slots (up to the limit) and rebuilds the index for them. */
  private grow(): void {
    const slots = Math.min(this.capacity, this.kinds.length * 2)
    const kinds = new Uint8Array(slots)
    kinds.set(this.kinds)
    this.kinds = kinds
    const words = new Int32Array(4 * slots)
    words.set(this.words)
    this.words = words
    const used = new Uint8Array(slots)
    used.set(this.used)
    this.used = used
    this.index = new Int32Array(indexSize(slots))
    this.mask = this.index.length - 1
    for (let slot = 0; slot < this.filled; slot++) {
      const kind = this.kinds[slot]
      if (kind === KEY_IPV4 || kind === KEY_IPV6) this.place(slot)
    }
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

/**
 * Mixes an address key's words (murmur3's multipliers and finaliser): subscribers' addresses differ in
 * their low bits (IPv4) or in the middle words (an IPv6 prefix a customer), and linear probing needs
 * those spread over the whole index. Not the kind: an IPv4 address and the IPv6 address of the same
 * words (1.2.3.4, 102:304::) share a probe run, told apart by the kind compared.
 */
function hash(k0: number, k1: number, k2: number, k3: number): number {
  let h = Math.imul(k0, 0xcc9e2d51) ^ Math.imul(k1, 0x1b873593) ^ Math.imul(k2, 0x85ebca6b) ^ Math.imul(k3, 0xc2b2ae35)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}
