/**
 * The encrypted DNS listeners' certificates in a DNS process's snapshot (`tlsCerts`), and the
 * `filterd_dns_tls_cert_not_after_seconds` gauge that /metrics makes of them.
 */
import { Gauge } from 'prom-client'
import type { MetricsSnapshot, SnapshotMetrics } from '../metrics/index.js'
import type { CertificateExpiry } from './expiry.js'

/** The certificates' part of a snapshot. */
export interface CertificatesSnapshot extends MetricsSnapshot {
  /** When the DoT and DoH listeners' certificate expires; absent without them or in an older process's snapshot. */
  tlsCerts?: CertificateExpiry[]
}

export const certificateMetrics: SnapshotMetrics = (registry) => {
  const notAfter = new Gauge({
    name: 'filterd_dns_tls_cert_not_after_seconds',
    help: 'unix time at which the certificate served by an encrypted listener (dot, doh) expires',
    labelNames: ['process', 'listener'] as const,
    registers: [registry]
  })
  return {
    reset: () => notAfter.reset(),
    add(proc, snapshot) {
      for (const c of (snapshot as CertificatesSnapshot).tlsCerts ?? [])
        notAfter.set({ process: proc, listener: c.listener }, c.notAfter)
    }
  }
}
