/**
 * Per-client daily request counts for billing, kept in the store's `usage` database under the key
 * `[clientId, 'YYYY-MM-DD']` (value: a number).
 *
 * Counting happens in memory (one Map increment per request); `flush()` adds the pending counts
 * to the store in one transaction that reads and writes each key, so several catapi processes on
 * one store add up instead of overwriting each other. The role flushes every few seconds and at
 * close: a crash loses at most one interval of counts, and a request never waits for a write
 * (lmdb-js: batch writes, never `putSync` per request). Usage writes do not go through
 * `Store.write`, so they do not bump the policy generation that other readers watch.
 */
import type { Store } from '../engine/store/index.js'

/** The day a timestamp falls in, in `timeZone`, as YYYY-MM-DD. */
export function dayFormatter(timeZone: string): (ms: number) => string {
  const fmt = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
  return (ms) => fmt.format(ms)
}

export class UsageCounter {
  readonly #store: Store
  readonly #dayOf: (ms: number) => string
  readonly #now: () => number
  // The day string is recomputed at most once a second (a coarse clock, docs/conventions.md, "Hot paths" 8).
  #day = ''
  #dayCheckedAt = -Infinity
  #pending = new Map<string, Map<string, number>>()
  #flushing: Promise<void> = Promise.resolve()

  constructor(store: Store, options: { timeZone?: string; now?: () => number } = {}) {
    this.#store = store
    this.#dayOf = dayFormatter(options.timeZone ?? 'UTC')
    this.#now = options.now ?? Date.now
  }

  /** Counts one request of `clientId`. */
  count(clientId: string): void {
    const now = this.#now()
    if (now - this.#dayCheckedAt >= 1000 || now < this.#dayCheckedAt) {
      this.#day = this.#dayOf(now)
      this.#dayCheckedAt = now
    }
    let byClient = this.#pending.get(this.#day)
    if (byClient === undefined) {
      byClient = new Map()
      this.#pending.set(this.#day, byClient)
    }
    byClient.set(clientId, (byClient.get(clientId) ?? 0) + 1)
  }

  /** Writes the pending counts; resolves once they are committed. Calls never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write())
    return this.#flushing
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return
    const batch = this.#pending
    this.#pending = new Map()
    const usage = this.#store.usage
    try {
      await usage.transaction(() => {
        for (const [day, byClient] of batch) {
          for (const [client, n] of byClient) {
            const key = [client, day]
            const old: unknown = usage.get(key)
            // Inside a transaction a put applies at once; its promise reports the commit, as the transaction's does.
            void usage.put(key, (typeof old === 'number' ? old : 0) + n)
          }
        }
      })
    } catch (err) {
      // Put the counts back so the next flush retries them: billing must not lose requests.
      for (const [day, byClient] of batch) {
        for (const [client, n] of byClient) {
          let m = this.#pending.get(day)
          if (m === undefined) {
            m = new Map()
            this.#pending.set(day, m)
          }
          m.set(client, (m.get(client) ?? 0) + n)
        }
      }
      throw err
    }
  }
}

export interface UsageRow {
  readonly client: string
  readonly day: string
  readonly requests: number
}

/** Stored usage, ordered by client then day; `from`/`to` are inclusive YYYY-MM-DD. */
export function readUsage(store: Store, filter: { client?: string; from?: string; to?: string } = {}): UsageRow[] {
  const out: UsageRow[] = []
  for (const { key, value } of store.usage.getRange()) {
    if (!Array.isArray(key) || key.length !== 2) continue
    const [client, day] = key as [unknown, unknown]
    if (typeof client !== 'string' || typeof day !== 'string' || typeof value !== 'number') continue
    if (filter.client !== undefined && client !== filter.client) continue
    if (filter.from !== undefined && day < filter.from) continue
    if (filter.to !== undefined && day > filter.to) continue
    out.push({ client, day, requests: value })
  }
  return out
}
