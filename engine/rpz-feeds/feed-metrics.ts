/**
 * The RPZ feeds' part of a DNS process's snapshot (`rpzFeeds`), and the `filterd_rpz_feed_*` metrics
 * that /metrics makes of it, by process and zone.
 */
import { Gauge } from 'prom-client'
import type { MetricsSnapshot, SnapshotMetrics } from '../metrics/index.js'

/** One RPZ feed as a DNS process holds it (engine/rpz-feeds/feed-set.ts `FeedReport`). */
export interface RpzFeedSnapshot {
  zone: string
  state: string
  serial: number | null
  records: number | null
  lastSuccess: number | null
  errors: number
  /** NSDNAME, NSIP and response-IP triggers held but not enforced. */
  unsupported: number
  counts: { qname: number; clientIp: number; nsdname: number; nsip: number; responseIp: number } | null
}

/** The RPZ feeds' part of a snapshot. */
export interface RpzFeedsSnapshot extends MetricsSnapshot {
  /** The RPZ feeds this process enforces (`rpz-feeds`); absent without feeds or in an older process's snapshot. */
  rpzFeeds?: RpzFeedSnapshot[]
}

const FEED_STATES = ['loading', 'ok', 'failing', 'expired'] as const
const TRIGGER_KINDS = [
  ['qname', 'qname'],
  ['clientIp', 'client-ip'],
  ['nsdname', 'nsdname'],
  ['nsip', 'nsip'],
  ['responseIp', 'response-ip']
] as const

/** The RPZ feeds' metrics (`rpz-feeds`), by process and zone, filled from the snapshots. */
export const rpzFeedMetrics: SnapshotMetrics = (registry) => {
  const labelNames = ['process', 'zone'] as const
  const gauge = <L extends string>(name: string, help: string, names: readonly L[]) =>
    new Gauge({ name, help, labelNames: names, registers: [registry] })
  const serial = gauge(
    'filterd_rpz_feed_serial',
    'SOA serial of the feed enforced now (absent before its first load)',
    labelNames
  )
  const records = gauge('filterd_rpz_feed_records', 'records of the feed enforced now', labelNames)
  const last = gauge(
    'filterd_rpz_feed_last_success_seconds',
    'unix time of the last good load or transfer; 0 = never',
    labelNames
  )
  const errors = gauge('filterd_rpz_feed_errors', 'failed loads or transfers since the process started', labelNames)
  const unsupported = gauge(
    'filterd_rpz_feed_unsupported_triggers',
    'NSDNAME, NSIP and response-IP triggers of the feed, held but not enforced (a forwarder cannot evaluate them)',
    labelNames
  )
  const triggers = gauge('filterd_rpz_feed_triggers', 'triggers of the feed by kind', ['process', 'zone', 'kind'])
  const state = gauge('filterd_rpz_feed_state', '1 for the state the feed is in: loading, ok, failing, expired', [
    'process',
    'zone',
    'state'
  ])
  const all = [serial, records, last, errors, unsupported, triggers, state]
  const addFeed = (proc: string, f: RpzFeedSnapshot): void => {
    const l = { process: proc, zone: f.zone }
    if (f.serial !== null) serial.set(l, f.serial)
    records.set(l, f.records ?? 0)
    last.set(l, f.lastSuccess === null ? 0 : Math.floor(f.lastSuccess / 1000))
    errors.set(l, f.errors)
    unsupported.set(l, f.unsupported)
    for (const [key, kind] of TRIGGER_KINDS) triggers.set({ ...l, kind }, f.counts?.[key] ?? 0)
    for (const s of FEED_STATES) state.set({ ...l, state: s }, f.state === s ? 1 : 0)
  }
  return {
    reset() {
      for (const m of all) m.reset()
    },
    add(proc, snapshot) {
      for (const f of (snapshot as RpzFeedsSnapshot).rpzFeeds ?? []) addFeed(proc, f)
    }
  }
}
