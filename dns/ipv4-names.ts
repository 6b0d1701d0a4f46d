/**
 * The text of recent IPv4 client addresses (the policy and the query log take an address as text), in a
 * direct-mapped table: an address's slot is picked by a hash of its 32 bits, a hit is one compare, and a
 * new address overwrites what its slot held. A Map emptied when full, as before, grew back through its
 * rehashes after every clear: with queries from more addresses than it held (an ISP host's million
 * subscribers), every query was a miss that also paid for a Map insert, its growth and the garbage of the
 * dropped tables. Here a miss costs the text alone and the table's memory never changes.
 */
const SLOTS_LOG2 = 16
const SLOTS = 1 << SLOTS_LOG2

export class Ipv4Names {
  private readonly keys = new Int32Array(SLOTS)
  private readonly texts: Array<string | undefined> = new Array<string | undefined>(SLOTS).fill(undefined)

  /** `ip4` (an unsigned 32-bit number) as dotted text. */
  nameOf(ip4: number): string {
    // Fibonacci hashing: the top bits of the product mix every bit of the address.
    const slot = Math.imul(ip4, 0x9e3779b1) >>> (32 - SLOTS_LOG2)
    const held = this.texts[slot]
    if (held !== undefined && this.keys[slot] === (ip4 | 0)) return held
    const text = `${ip4 >>> 24}.${(ip4 >>> 16) & 255}.${(ip4 >>> 8) & 255}.${ip4 & 255}`
    this.keys[slot] = ip4
    this.texts[slot] = text
    return text
  }
}
