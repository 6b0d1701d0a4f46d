/**
 * A bounded map that evicts by CLOCK (second chance), for the per-address policy snapshots: a hit
 * only sets the entry's reference bit (one typed-array write, no Map reordering as an LRU would do
 * on the query path), and an insert into a full cache sweeps a hand over the slots, clearing bits,
 * until it finds an entry not used since the hand last passed, which it replaces. Addresses that
 * query all the time keep their snapshots while a crowd of one-off addresses churns through the
 * rest; emptying the whole cache when full (what this replaces) made every hot address miss after
 * each fill.
 */
export class ClockCache<V> {
  private readonly index = new Map<string, number>()
  private readonly keys: string[] = []
  private readonly values: V[] = []
  private readonly referenced: Uint8Array
  private hand = 0
  readonly capacity: number

  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity))
    this.referenced = new Uint8Array(this.capacity)
  }

  get size(): number {
    return this.index.size
  }

  get(key: string): V | undefined {
    const i = this.index.get(key)
    if (i === undefined) return undefined
    this.referenced[i] = 1
    return this.values[i]
  }

  /** Adds `key` (not held: call after a `get` miss), evicting an entry not used recently when full. */
  set(key: string, value: V): void {
    if (this.keys.length < this.capacity) {
      this.index.set(key, this.keys.length)
      this.keys.push(key)
      this.values.push(value)
      return
    }
    const ref = this.referenced
    while (ref[this.hand] === 1) {
      ref[this.hand] = 0
      this.hand = (this.hand + 1) % this.capacity
    }
    const i = this.hand
    this.index.delete(this.keys[i]!) // i < capacity = keys.length here
    this.index.set(key, i)
    this.keys[i] = key
    this.values[i] = value
    this.hand = (i + 1) % this.capacity
  }

  clear(): void {
    this.index.clear()
    this.keys.length = 0
    this.values.length = 0
    this.referenced.fill(0)
    this.hand = 0
  }
}
