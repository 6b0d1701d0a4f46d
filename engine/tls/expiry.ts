/**
 * When a listener's TLS certificate stops being valid, for /metrics (`..._tls_cert_not_after_seconds`)
 * and /health: a certificate that expires within `common.tls-cert-warn-days` (or has expired) makes
 * its role degraded, as a warning: plain DNS and HTTP still serve, and the operator has days to
 * renew before clients' handshakes fail.
 */
import { X509Certificate } from 'node:crypto'
import type { HealthProblem } from '../health/index.js'

const DAY_MS = 86_400_000

/** One listener's certificate expiry: `listener` is its transport (`dot`, `doh`, `https`). */
export interface CertificateExpiry {
  readonly listener: string
  /** notAfter of the leaf certificate, in seconds since the epoch. */
  readonly notAfter: number
}

/** notAfter of the first certificate of a PEM chain (the leaf), in seconds since the epoch. */
export function certificateNotAfter(pem: string | Buffer): number {
  // validTo is "Dec  7 04:00:00 2026 GMT", which Date.parse reads (validToDate arrived only in Node 22).
  return Math.floor(Date.parse(new X509Certificate(pem).validTo) / 1000)
}

/** A warning for each certificate of `list` that expires within `warnDays` of `now` (ms), or has expired. */
export function certificateProblems(
  list: readonly CertificateExpiry[],
  warnDays: number,
  now = Date.now()
): HealthProblem[] {
  const out: HealthProblem[] = []
  for (const c of list) {
    const left = c.notAfter * 1000 - now
    if (left > warnDays * DAY_MS) continue
    const at = new Date(c.notAfter * 1000).toISOString()
    out.push({
      what: `tls-cert ${c.listener}`,
      why:
        left <= 0
          ? `the certificate of the ${c.listener} listener expired at ${at}: clients refuse the handshake; renew it`
          : `the certificate of the ${c.listener} listener expires at ${at}, in ${Math.floor(left / DAY_MS)} day(s) (common.tls-cert-warn-days: ${warnDays}); renew it`,
      warning: true
    })
  }
  return out
}
