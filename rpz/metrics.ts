/** The rpz role's Prometheus metrics: zones and serials, transfers served, NOTIFYs. */
import { Counter, Gauge, Registry } from 'prom-client'
import type { PolicyZoneSet } from './zone-set.js'
import type { Notifier } from './notify.js'
import type { ListenerStats } from './listener.js'

export type RequestKind = 'axfr' | 'ixfr' | 'current' | 'soa' | 'refused' | 'tsig-failed' | 'formerr'

export interface RpzMetrics {
  registry: Registry
  count(kind: RequestKind): void
  /** A connection closed on accept: rpz.tcp-max-connections were open. */
  dropped(): void
  /** Where the TCP listener's connection gauges read from, once it listens. */
  listener?: () => ListenerStats
  requests: Record<RequestKind, number>
}

export function rpzMetrics(zones: PolicyZoneSet, notifier: Notifier): RpzMetrics {
  const registry = new Registry()
  const requests: Record<RequestKind, number> = {
    axfr: 0,
    ixfr: 0,
    current: 0,
    soa: 0,
    refused: 0,
    'tsig-failed': 0,
    formerr: 0
  }
  new Gauge({
    name: 'filterd_rpz_zone_serial',
    help: 'SOA serial each served RPZ zone is at',
    labelNames: ['zone'],
    registers: [registry],
    collect() {
      this.reset()
      for (const z of zones.list()) this.set({ zone: z.name }, z.serial)
    }
  })
  new Gauge({
    name: 'filterd_rpz_zone_triggers',
    help: 'triggers (owner names) in each served RPZ zone',
    labelNames: ['zone'],
    registers: [registry],
    collect() {
      this.reset()
      for (const z of zones.list()) this.set({ zone: z.name }, z.triggers)
    }
  })
  const counter = new Counter({
    name: 'filterd_rpz_requests_total',
    help: 'requests to the rpz listener by outcome (axfr, ixfr, current: IXFR of a current secondary, soa, refused, tsig-failed, formerr)',
    labelNames: ['kind'],
    registers: [registry]
  })
  new Gauge({
    name: 'filterd_rpz_notify_total',
    help: 'NOTIFYs sent to secondaries by outcome (acknowledged, unanswered after every retry)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.set({ outcome: 'acknowledged' }, notifier.acknowledged)
      this.set({ outcome: 'unanswered' }, notifier.unanswered)
    }
  })
  const dropped = new Counter({
    name: 'filterd_rpz_tcp_dropped_total',
    help: 'TCP connections closed on accept because rpz.tcp-max-connections were open',
    registers: [registry]
  })
  const metrics: RpzMetrics = {
    registry,
    requests,
    count(kind) {
      requests[kind]++
      counter.inc({ kind })
    },
    dropped() {
      dropped.inc()
    }
  }
  listenerGauges(registry, metrics)
  return metrics
}

/** The TCP listener's gauges, read from `metrics.listener` once the role listens. */
function listenerGauges(registry: Registry, metrics: RpzMetrics): void {
  new Gauge({
    name: 'filterd_rpz_tcp_connections',
    help: 'open TCP connections to the rpz listener',
    registers: [registry],
    collect() {
      this.set(metrics.listener?.().connections ?? 0)
    }
  })
  new Gauge({
    name: 'filterd_rpz_tcp_queued_bytes',
    help: 'answer bytes written to the TCP connections and not yet taken by the kernel (bounded by back-pressure)',
    registers: [registry],
    collect() {
      this.set(metrics.listener?.().queuedBytes ?? 0)
    }
  })
}
