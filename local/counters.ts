/**
 * Lookup counters of the local service: one Float64Array slot per category number plus one for
 * uncategorized names. A lookup costs an indexed increment (no allocation, no I/O); a Float64Array
 * counts exactly up to 2^53, far past any 5-minute window.
 *
 * Reporting takes a copy (`snapshot()`), sends it, and on success subtracts exactly that copy
 * (`subtract()`): lookups counted while the report was in flight stay for the next one.
 */
import { MAX_CATEGORY } from '../engine/categories/index.js'

export interface CounterSnapshot {
  counter_cat: number[]
  counter_unknown_cat: number[]
}

export class LookupCounters {
  readonly #cats = new Float64Array(MAX_CATEGORY + 1)
  #unknown = 0
  /** Length of `counter_cat` in answers: the taxonomy's highest number + 1, grown by any higher hit. */
  #length: number

  constructor(highestCategory: number) {
    this.#length = highestCategory + 1
  }

  /** Counts one lookup that returned `categories`. */
  countCategories(categories: readonly number[]): void {
    for (let i = 0; i < categories.length; i++) {
      const c = categories[i]!
      this.#cats[c]!++
      if (c >= this.#length) this.#length = c + 1
    }
  }

  countUnknown(): void {
    this.#unknown++
  }

  /** The spec's Counters resource: `counter_cat` indexed by category number. */
  snapshot(): CounterSnapshot {
    return {
      counter_cat: Array.from(this.#cats.subarray(0, this.#length)),
      counter_unknown_cat: [this.#unknown]
    }
  }

  /** Removes what a successful report carried. */
  subtract(sent: CounterSnapshot): void {
    const cats = sent.counter_cat
    for (let i = 0; i < cats.length; i++) {
      const n = cats[i]!
      if (n !== 0) this.#cats[i]! -= n
    }
    this.#unknown -= sent.counter_unknown_cat[0] ?? 0
  }
}
