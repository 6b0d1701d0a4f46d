// dns: the filtering DNS server role (fronts, dispatch, forwarding). See docs/dns.md.
export {
  startDnsServer, kMaxTcpQueryFrame, kMaxTcpInflight,
  type DnsServer, type DnsServerOptions, type DnsListener
} from './server.js'
export { startRole, type DnsRoleOptions } from './role.js'
export { Peer, type PeerChannel } from './peer.js'
export type { QueryLogRecord, QueryLogSink, QueryLogSinkFactory } from '../engine/querylog/index.js'
