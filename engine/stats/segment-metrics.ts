/**
 * The segment applier's shape and its numbers on the api role's /metrics, apart from
 * segment-fetch.ts so that a single host (no Redis) loads no Redis client for them.
 */
import { Counter, Gauge, type Registry } from 'prom-client'

export interface SegmentCounters {
  fetched: number
  applied: number
  duplicates: number
  /** Transfers refused (size or checksum) or failed. */
  failed: number
  rows: number
}

export interface SegmentApplier {
  readonly counters: SegmentCounters
  /** Segments lost to retention before this store applied them, per host, as of the last pass. */
  readonly gaps: Readonly<Record<string, number>>
  /** Runs a pass now, after the one running (tests). */
  applyNow(): Promise<Record<string, number>>
  close(): Promise<void>
}

/**
 * The applier on the api role's /metrics:
 *   filterd_stats_segment_gap_segments{host}     segments of that host lost to retention before this host applied them
 *   filterd_stats_segments_fetched_total         transfers completed (checked or refused)
 *   filterd_stats_segments_applied_total         segments applied
 *   filterd_stats_segments_duplicate_total       segments fetched again that the ledger already held (counted once)
 *   filterd_stats_segments_failed_total          passes over a host that stopped on a failed fetch or apply
 *   filterd_stats_segment_rows_total             query rows applied from segments
 */
export function registerSegmentMetrics(registry: Registry, applier: SegmentApplier): void {
  void new Gauge({
    name: 'filterd_stats_segment_gap_segments',
    help: 'segments of a host that retention removed before this host applied them (its reports lack their rows)',
    labelNames: ['host'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const [host, n] of Object.entries(applier.gaps)) this.set({ host }, n)
    }
  })
  const counter = (name: string, help: string, read: () => number): void => {
    void new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(read())
      }
    })
  }
  const c = applier.counters
  counter('filterd_stats_segments_fetched_total', 'segment transfers completed since start', () => c.fetched)
  counter('filterd_stats_segments_applied_total', 'segments applied since start', () => c.applied)
  counter(
    'filterd_stats_segments_duplicate_total',
    'segments fetched again that were already applied (counted once)',
    () => c.duplicates
  )
  counter(
    'filterd_stats_segments_failed_total',
    'segment fetches or applies that failed since start (retried)',
    () => c.failed
  )
  counter('filterd_stats_segment_rows_total', 'query rows applied from segments since start', () => c.rows)
}
