// engine/dnstap: dnstap (Frame Streams + protobuf) output of the DNS role (docs/dns.md, "dnstap").
export { FrameStreamWriter, type FrameStreamTarget, type FrameStreamWriterOptions } from './writer.js'
export {
  DnstapEncoder,
  DnstapEvent,
  type DnstapIdentity,
  PROTOCOL_TCP,
  PROTOCOL_UDP,
  POLICY_LOCAL_DATA
} from './message.js'
export { fillPolicy } from './policy.js'
export { parseDnstapTarget } from './target.js'
