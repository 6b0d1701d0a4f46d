/**
 * engine/tls, the face: certificates. The certificate source a TLS listener reads (again on SIGHUP),
 * its expiry for /health and /metrics, and the self-signed certificate of the demo.
 */
export { CertificateSource, TLS_MIN_VERSION } from './certificates.js'
export { type CertificateExpiry, certificateNotAfter, certificateProblems } from './expiry.js'
export { type CertificatesSnapshot, certificateMetrics } from './metrics.js'
export { ensureSelfSigned } from './self-signed.js'
