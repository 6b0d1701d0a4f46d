/**
 * Each list subscription on `/metrics`, read from its state in the store when scraped (so with Redis
 * every host shows the same numbers, whichever host fetched):
 *
 *   filterd_list_entries{source}                entries of the last good copy, enforced now
 *   filterd_list_last_success_seconds{source}   unix time the copy was last confirmed (200 or 304); 0 never
 *   filterd_list_age_seconds{source}            seconds since then (absent before the first success)
 *   filterd_list_errors{source}                 failed refreshes since the source was added
 *   filterd_list_consecutive_errors{source}     failed refreshes since the last success
 *   filterd_list_invalid_lines{source}          lines of the last good copy that could not be read
 */
import { Gauge, type Registry } from 'prom-client'
import type { Store } from '../store/index.js'
import { sourceState, type ListSource, type ListState } from './keys.js'

type Read = (s: ListState, nowMs: number) => number | undefined

const GAUGES: ReadonlyArray<[name: string, help: string, read: Read]> = [
  ['filterd_list_entries', 'entries of the last good copy of the list, enforced now', (s) => s.entries],
  [
    'filterd_list_last_success_seconds',
    'unix time the list was last confirmed (200 applied or 304); 0 = never',
    (s) => Math.floor(s.lastSuccess / 1000)
  ],
  [
    'filterd_list_age_seconds',
    'seconds since the list was last confirmed',
    (s, now) => (s.lastSuccess === 0 ? undefined : Math.max(0, Math.floor((now - s.lastSuccess) / 1000)))
  ],
  ['filterd_list_errors', 'failed refreshes of the list since it was added', (s) => s.errors],
  [
    'filterd_list_consecutive_errors',
    'failed refreshes of the list since its last success',
    (s) => s.consecutiveErrors
  ],
  ['filterd_list_invalid_lines', 'lines of the last good copy that could not be read', (s) => s.invalid]
]

export function registerListMetrics(
  registry: Registry,
  store: Store,
  sources: () => readonly ListSource[],
  now: () => number = Date.now
): void {
  for (const [name, help, read] of GAUGES) {
    new Gauge({
      name,
      help,
      labelNames: ['source'] as const,
      registers: [registry],
      collect() {
        this.reset()
        const t = now()
        for (const s of sources()) {
          const state = sourceState(store, s.id)
          const v = state === undefined ? undefined : read(state, t)
          if (v !== undefined) this.set({ source: s.id }, v)
        }
      }
    })
  }
}
