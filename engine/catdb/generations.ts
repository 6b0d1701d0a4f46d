/**
 * A bounded map with two generations instead of per-entry eviction: new keys go to `recent`; when it
 * is full it becomes `older` and the previous `older` is dropped, and a key found in `older` moves
 * back to `recent`. Popular keys so survive every turnover, a hit is one or two Map lookups with no
 * bookkeeping, and there is no moment when the whole cache is cold. Holds at most `2 × generation`
 * entries.
 */
export class GenerationCache<V> {
  #recent = new Map<string, V>()
  #older = new Map<string, V>()
  readonly #generation: number

  /** `entries`: the most it holds (two generations of half that). */
  constructor (entries: number) {
    this.#generation = Math.max(1, Math.floor(entries / 2))
  }

  get (key: string): V | undefined {
    const v = this.#recent.get(key)
    if (v !== undefined) return v
    const old = this.#older.get(key)
    if (old !== undefined) this.set(key, old)
    return old
  }

  set (key: string, value: V): void {
    if (this.#recent.size >= this.#generation) {
      this.#older = this.#recent
      this.#recent = new Map()
    }
    this.#recent.set(key, value)
  }

  clear (): void {
    this.#recent = new Map()
    this.#older = new Map()
  }

  get size (): number {
    return this.#recent.size + this.#older.size
  }
}
