/**
 * Following the store's generation. Every `Store.write` bumps it (and so does a category database
 * build), and every reader that caches something derived from the store (per-address policy,
 * verified client secrets, the active category tables) drops it when the generation moves: all of it,
 * or, for the per-address policy, what the change journal says the writes touched
 * (engine/store/journal.ts, `Store.changesBetween`). This is the one place that says how soon: within
 * GENERATION_CHECK_MS of a write, every reader enforces it.
 *
 * Reading the generation is an LMDB read, and lmdb-js renews its read transaction for it and
 * schedules a timer to reset it: measured in the categorization API, a read every millisecond was
 * still 5% of the request time. So a reader reads it at most once per interval, either on a timer
 * (`start`, for a process whose event loop turns while idle: the DNS server) or when it next has
 * work (`poll`: a request, a batch in a pool worker). `check` reads it at once.
 *
 * @example
 * const watcher = new GenerationWatcher(store, () => { cache.clear() }).start()
 * // … on close
 * watcher.stop()
 */
import type { Store } from './index.js'

/** How long a store write may stay unseen by a reader, in ms. */
export const GENERATION_CHECK_MS = 10

export interface GenerationWatcherOptions {
  /**
   * Renew the read snapshot before each read. For a Piscina worker: it sleeps in Atomics.wait
   * between tasks, so lmdb-js's own renewal (on a later event turn) may never run there.
   */
  readonly renewSnapshot?: boolean
}

export class GenerationWatcher {
  readonly #store: Store
  readonly #onChange: (generation: number) => void
  readonly #renewSnapshot: boolean
  #generation: number
  #checkedAt: number
  #timer: NodeJS.Timeout | null = null

  /** `onChange` runs (synchronously, inside check or poll) each time the generation has moved. */
  constructor(store: Store, onChange: (generation: number) => void, options: GenerationWatcherOptions = {}) {
    this.#store = store
    this.#onChange = onChange
    this.#renewSnapshot = options.renewSnapshot === true
    this.#generation = store.generation()
    this.#checkedAt = Date.now()
  }

  /** The generation last read. */
  get generation(): number {
    return this.#generation
  }

  /** Reads the generation now; runs `onChange` and returns true when it moved. */
  check(): boolean {
    this.#checkedAt = Date.now()
    if (this.#renewSnapshot) this.#store.root.resetReadTxn()
    const g = this.#store.generation()
    if (g === this.#generation) return false
    this.#generation = g
    this.#onChange(g)
    return true
  }

  /** `check()` when the last read is GENERATION_CHECK_MS old; else one clock read and nothing. */
  poll(): boolean {
    // Date.now, not performance.now: a V8 builtin rather than a call into node. A clock set back
    // makes the difference negative, which counts as due.
    const since = Date.now() - this.#checkedAt
    if (since < GENERATION_CHECK_MS && since >= 0) return false
    return this.check()
  }

  /** Checks every GENERATION_CHECK_MS on a timer that does not keep the process alive, until `stop()`. */
  start(): this {
    if (this.#timer === null) {
      this.#timer = setInterval(() => {
        this.check()
      }, GENERATION_CHECK_MS)
      this.#timer.unref()
    }
    return this
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
  }
}
