/**
 * engine/metrics, the face: operational metrics. The DNS processes' snapshots and the `/metrics`
 * route that reads them (./snapshots.ts), the DNS front's part of them (./dns.ts), and the HTTP
 * roles' own request metrics (./http.ts).
 */
export * from './snapshots.js'
export * from './dns.js'
export * from './http.js'
