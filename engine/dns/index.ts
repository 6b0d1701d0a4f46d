// engine/dns: the filtering DNS server (front loop, dispatch, forwarding). See docs/dns.md.
export {
  startDnsServer, kMaxTcpQueryFrame, kMaxTcpInflight,
  type DnsServer, type DnsServerOptions, type DnsListener
} from './server.js'
export { startRole, type DnsRoleOptions } from './role.js'
export {
  Judge, QueryKeys, compileBlockAnswers, JUDGE_DROP, JUDGE_ANSWER, JUDGE_FORWARD, JUDGE_SAFEVIDEO,
  type JudgeKind, type BlockAnswers
} from './judge.js'
export type { QueryLogRecord, QueryLogSink, QueryLogSinkFactory } from '../querylog/index.js'
