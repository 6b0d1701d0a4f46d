/**
 * engine/rpz-zones, the face: the RPZ zone codec, both ways: names, messages and rdata on the wire,
 * serials, TSIG, zones and zone files, and the transfers out that the rpz role (rpz/) serves.
 */
export {
  CLASS_IN,
  type Message,
  MessageWriter,
  OPCODE_NOTIFY,
  OPCODE_QUERY,
  type ParsedRecord,
  RCODE_FORMERR,
  RCODE_NOTAUTH,
  RCODE_NOTIMP,
  RCODE_REFUSED,
  TYPE_A,
  TYPE_AAAA,
  TYPE_AXFR,
  TYPE_CNAME,
  TYPE_IXFR,
  TYPE_NS,
  TYPE_SOA,
  buildEmptyReply,
  buildQuery,
  parseMessage
} from './message.js'
export { rdataToText, readSoa, soaRdata } from './rdata.js'
export { toSerial } from './serial.js'
export { packRecords, transferRecords } from './transfer-out.js'
export { type TsigKey, TsigSigner, TsigVerifier, tsigKey } from './tsig.js'
export {
  type ActionRecord,
  NXDOMAIN_TARGET,
  PASSTHRU,
  RpzZone,
  type ZoneOptions,
  actionKey,
  cnameAction
} from './zone.js'
export { type TextRecord, readZoneFile } from './zonefile.js'
