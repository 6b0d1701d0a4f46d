/*
 * Reading one DNS query without allocating.
 *
 * The front loop calls `readQuery` for every datagram, so it must not build
 * objects or strings: it fills a long-lived `QueryScratch` (one per front
 * loop, stable shape) and returns a verdict that is either QUERY_OK,
 * QUERY_DROP, or the RCODE to answer with. Strings are built only when
 * someone asks for them: `keyOf` for the store lookup (once per query, then
 * cheap substrings at label boundaries), `nameOf` for logging,
 * `ecsAddressOf` when a policy needs the client subnet.
 *
 * What is accepted is deliberately narrower than what RFC 1035 allows a
 * parser to meet: a query has exactly one uncompressed question, empty
 * answer/authority sections and at most one additional record, which must be
 * a well-formed OPT. Anything else gets FORMERR, so whatever we forward
 * upstream or answer ourselves has been fully validated. The fuzz test holds
 * this to one promise: QUERY_OK is never returned for bytes dns-packet
 * cannot decode.
 */
import {
  EDNS_FLAG_DO,
  EDNS_OPTION_COOKIE,
  EDNS_OPTION_ECS,
  EDNS_OPTION_KEEPALIVE,
  EDNS_OPTION_KEY_TAG,
  ECS_FAMILY_IPV4,
  ECS_FAMILY_IPV6,
  FLAG_QR,
  HEADER_SIZE,
  OPCODE_MASK,
  OPCODE_QUERY,
  OPCODE_SHIFT,
  QTYPE_OPT,
  RCODE_BADVERS,
  RCODE_FORMERR,
  RCODE_NOTIMP
} from './constants.js'
import { formatIPv4, formatIPv6 } from './ip.js'

/** Verdict of `readQuery`: the query is valid; answer or forward it. */
export const QUERY_OK = 0
/** Verdict of `readQuery`: send nothing (too short to answer, or a response: never answer a response). */
export const QUERY_DROP = -1
/**
 * `readQuery` returns QUERY_OK, QUERY_DROP, or the RCODE to answer with via
 * `writeErrorAnswer`: RCODE_FORMERR, RCODE_NOTIMP or RCODE_BADVERS.
 */
export type QueryVerdict = number

const MAX_NAME_WIRE = 255 // RFC 1035 §2.3.4, counting length octets and the root label
const MAX_LABEL = 63
const MAX_LABELS = 127 // 127 one-byte labels + root = 255 octets

// ASCII case fold A-Z only (RFC 4343 §3: DNS compares case-insensitively in ASCII only).
const LOWER = new Uint8Array(256)
// Bytes a lookup key may hold unescaped: a-z 0-9 - _ * (after folding).
const KEY_SAFE = new Uint8Array(256)
for (let c = 0; c < 256; c++) {
  LOWER[c] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c
  KEY_SAFE[c] = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f || c === 0x2a ? 1 : 0
}

/**
 * The parsed query. One instance per front loop, reused for every packet.
 * Every field is borrowed: valid until the next `readQuery` on this scratch.
 * Copy what you keep (`keyOf`/`nameOf` return fresh strings).
 */
export class QueryScratch {
  /** Message ID. */
  id = 0
  /** The whole 16-bit flags word of the header (test with FLAG_RD, FLAG_CD …). */
  flags = 0
  /** OPCODE (0 = QUERY). */
  opcode = 0
  qtype = 0
  qclass = 0
  /** Offset just past QCLASS; 0 when no question was parsed (then answers carry QDCOUNT 0). */
  questionEnd = 0
  /**
   * The QNAME lower-cased (A-Z only), labels joined by raw 0x2e bytes, no
   * trailing dot, no escaping: bytes [0, nameLength). A label may itself hold
   * 0x2e; `labelStarts` is the truth about boundaries.
   */
  readonly nameBytes = Buffer.alloc(MAX_NAME_WIRE)
  nameLength = 0
  /** Start offset in `nameBytes` of each label, leftmost first: [0, labelCount). */
  readonly labelStarts = new Uint8Array(MAX_LABELS + 1)
  labelCount = 0
  /** Some name byte is outside [a-z0-9-_*] after folding, so keys need escaping. */
  needsEscape = false

  /** The query carried a valid OPT RR (RFC 6891). */
  hasEdns = false
  /** Requestor's UDP payload size, raw from the OPT CLASS (treat values < 512 as 512, RFC 6891 §6.2.3). */
  udpPayloadSize = 0
  ednsVersion = 0
  /** OPT TTL flags word (DO is 0x8000). */
  ednsFlags = 0
  /** DNSSEC OK (RFC 3225). */
  isDnssecOk = false
  /** Offset of the OPT RR in the message, 0 when none. */
  optOffset = 0

  /** An EDNS Client Subnet option was present (RFC 7871). */
  hasClientSubnet = false
  /** ECS_FAMILY_IPV4 (1) or ECS_FAMILY_IPV6 (2). */
  ecsFamily = 0
  ecsSourcePrefix = 0
  ecsScopePrefix = 0
  /** ECS address, zero-padded to 4 (IPv4) or 16 (IPv6) bytes; see `ecsAddressOf`. */
  readonly ecsAddress = Buffer.alloc(16)

  // Lookup-key cache filled by the first keyOf() after a readQuery().
  keyReady = false
  key = ''
  /** Start offset in `key` of each label (differs from labelStarts only when escaping). */
  readonly keyStarts = new Uint16Array(MAX_LABELS + 1)
  /**
   * Suffix keys already cut for this query: the policy asks for each suffix up to five times
   * (built-in whitelist, global and user lists, categories), and a substring allocates.
   * `suffixes[i]` is valid when `suffixStamps[i] === stamp`; readQuery moves `stamp` on.
   */
  readonly suffixes: string[] = new Array<string>(MAX_LABELS + 1).fill('')
  readonly suffixStamps = new Uint32Array(MAX_LABELS + 1)
  stamp = 0
}

/**
 * Reads header, question and OPT of `msg` into `out`, allocating nothing.
 *
 * Returns QUERY_OK, QUERY_DROP, or the RCODE to answer with
 * (RCODE_NOTIMP, RCODE_FORMERR, RCODE_BADVERS). After a FORMERR,
 * `out.questionEnd` is non-zero only when the question itself was valid.
 *
 * one piece: it runs for every query on the DNS hot path; the header and QNAME loops keep their
 * bounds checks and counters in locals, which a split would pass through calls or scratch fields.
 */
export function readQuery(msg: Buffer, out: QueryScratch): QueryVerdict {
  out.questionEnd = 0
  out.nameLength = 0
  out.labelCount = 0
  out.needsEscape = false
  out.keyReady = false
  if (++out.stamp > 0xffffffff) {
    out.stamp = 1
    out.suffixStamps.fill(0)
  }
  out.hasEdns = false
  out.udpPayloadSize = 0
  out.ednsVersion = 0
  out.ednsFlags = 0
  out.isDnssecOk = false
  out.optOffset = 0
  out.hasClientSubnet = false
  out.ecsFamily = 0
  out.ecsSourcePrefix = 0
  out.ecsScopePrefix = 0

  const end = msg.length
  if (end < HEADER_SIZE) return QUERY_DROP
  // end >= HEADER_SIZE was checked above, so msg[0..11] are in range.
  const flags = (msg[2]! << 8) | msg[3]!
  out.id = (msg[0]! << 8) | msg[1]!
  out.flags = flags
  out.opcode = (flags & OPCODE_MASK) >>> OPCODE_SHIFT
  out.qtype = 0
  out.qclass = 0
  if ((flags & FLAG_QR) !== 0) return QUERY_DROP
  if (out.opcode !== OPCODE_QUERY) return RCODE_NOTIMP
  const qdcount = (msg[4]! << 8) | msg[5]!
  const ancount = (msg[6]! << 8) | msg[7]!
  const nscount = (msg[8]! << 8) | msg[9]!
  const arcount = (msg[10]! << 8) | msg[11]!
  // RFC 1035 allows QDCOUNT > 1 in theory, but no server answers it; an
  // answer or authority section in a QUERY is meaningless (RFC 1035 §4.1.1).
  if (qdcount !== 1 || ancount !== 0 || nscount !== 0) return RCODE_FORMERR

  // QNAME. Every read of msg[i] below is preceded by a check that i < end.
  const bytes = out.nameBytes
  const starts = out.labelStarts
  let i = HEADER_SIZE
  let n = 0 // bytes written to nameBytes
  let wire = 1 // wire length so far, counting the root label
  let labels = 0
  let escape = false
  for (;;) {
    if (i >= end) return RCODE_FORMERR
    const len = msg[i]!
    if (len === 0) break
    // Compression pointers (0xC0) are legal in a QNAME by RFC 1035 §4.1.4,
    // but the question is the first name in the message, so a pointer could
    // only point forward or into the header; no real client sends one.
    // Answer FORMERR rather than follow it. 0x40/0x80 are the obsolete
    // extended label types (RFC 6891 §5): also FORMERR.
    if (len > MAX_LABEL) return RCODE_FORMERR
    wire += len + 1
    if (wire > MAX_NAME_WIRE) return RCODE_FORMERR
    const labelEnd = i + 1 + len
    if (labelEnd >= end) return RCODE_FORMERR // the next length octet must exist too
    if (labels !== 0) bytes[n++] = 0x2e
    starts[labels++] = n
    for (let j = i + 1; j < labelEnd; j++) {
      const c = LOWER[msg[j]!]! // j < labelEnd < end; LOWER has 256 entries
      if (KEY_SAFE[c] === 0) escape = true
      bytes[n++] = c
    }
    i = labelEnd
  }
  i++ // the root label
  if (i + 4 > end) return RCODE_FORMERR
  // i + 4 <= end was checked just above.
  out.qtype = (msg[i]! << 8) | msg[i + 1]!
  out.qclass = (msg[i + 2]! << 8) | msg[i + 3]!
  i += 4
  out.nameLength = n
  out.labelCount = labels
  out.needsEscape = escape
  out.questionEnd = i

  if (arcount === 0) return i === end ? QUERY_OK : RCODE_FORMERR // trailing garbage
  // At most one OPT (RFC 6891 §6.1.1). Other additional records (TSIG,
  // SIG(0)) are signatures addressed to us that we could neither verify nor
  // forward meaningfully: FORMERR as well.
  if (arcount !== 1) return RCODE_FORMERR
  return readOpt(msg, i, out)
}

function readOpt(msg: Buffer, off: number, out: QueryScratch): QueryVerdict {
  const end = msg.length
  if (off + 11 > end) return RCODE_FORMERR
  // off + 11 <= end was checked just above.
  if (msg[off]! !== 0) return RCODE_FORMERR // OPT owner MUST be root (RFC 6891 §6.1.2)
  if (((msg[off + 1]! << 8) | msg[off + 2]!) !== QTYPE_OPT) return RCODE_FORMERR
  const rdlen = (msg[off + 9]! << 8) | msg[off + 10]!
  const rdEnd = off + 11 + rdlen
  if (rdEnd !== end) return RCODE_FORMERR // overrun, or trailing garbage
  out.udpPayloadSize = (msg[off + 3]! << 8) | msg[off + 4]!
  out.ednsVersion = msg[off + 6]!
  const ednsFlags = (msg[off + 7]! << 8) | msg[off + 8]!
  out.ednsFlags = ednsFlags
  out.isDnssecOk = (ednsFlags & EDNS_FLAG_DO) !== 0
  out.optOffset = off
  out.hasEdns = true
  // RFC 6891 §6.1.3: answer BADVERS to versions we do not implement; their
  // options may not even share version 0's format, so stop here.
  if (out.ednsVersion !== 0) return RCODE_BADVERS

  let p = off + 11
  while (p < rdEnd) {
    if (p + 4 > rdEnd) {
      out.hasEdns = false
      return RCODE_FORMERR
    }
    // p + 4 <= rdEnd == end was checked just above.
    const code = (msg[p]! << 8) | msg[p + 1]!
    const olen = (msg[p + 2]! << 8) | msg[p + 3]!
    const data = p + 4
    if (data + olen > rdEnd) {
      out.hasEdns = false
      return RCODE_FORMERR
    }
    let ok = true
    switch (code) {
      case EDNS_OPTION_ECS:
        ok = readClientSubnet(msg, data, olen, out)
        break
      // RFC 7873 §5.2.2: a client cookie alone (8) or with a server cookie (16..40).
      case EDNS_OPTION_COOKIE:
        ok = olen === 8 || (olen >= 16 && olen <= 40)
        break
      // RFC 7828 §3.1: TIMEOUT is a single 16-bit field (omitted in queries).
      case EDNS_OPTION_KEEPALIVE:
        ok = olen === 0 || olen === 2
        break
      // RFC 8145 §4.1: a list of 16-bit key tags.
      case EDNS_OPTION_KEY_TAG:
        ok = olen !== 0 && (olen & 1) === 0
        break
    }
    if (!ok) {
      out.hasEdns = false
      out.hasClientSubnet = false
      return RCODE_FORMERR
    }
    p = data + olen
  }
  return QUERY_OK
}

// RFC 7871 §6: FAMILY, SOURCE PREFIX-LENGTH, SCOPE PREFIX-LENGTH, ADDRESS
// truncated to ceil(source / 8) octets with the bits past the prefix zero;
// a server SHOULD answer FORMERR to anything else. A second ECS option in one
// query is ambiguous: FORMERR as well.
function readClientSubnet(msg: Buffer, data: number, olen: number, out: QueryScratch): boolean {
  if (out.hasClientSubnet || olen < 4) return false
  // data + olen <= msg.length was checked by the caller, and olen >= 4 here.
  const family = (msg[data]! << 8) | msg[data + 1]!
  const source = msg[data + 2]!
  const maxBits = family === ECS_FAMILY_IPV4 ? 32 : family === ECS_FAMILY_IPV6 ? 128 : 0
  if (maxBits === 0 || source > maxBits) return false
  const addrLen = (source + 7) >>> 3
  if (olen - 4 !== addrLen) return false
  if (addrLen !== 0 && (source & 7) !== 0) {
    // The last address octet is data + 4 + addrLen - 1 < data + olen.
    const mask = 0xff >>> (source & 7)
    if ((msg[data + 3 + addrLen]! & mask) !== 0) return false
  }
  // Byte loops: for at most 16 bytes they beat Buffer#fill/copy's call overhead.
  const addr = out.ecsAddress
  for (let k = 0; k < 16; k++) addr[k] = k < addrLen ? msg[data + 4 + k]! : 0 // data + 4 + addrLen <= data + olen
  out.hasClientSubnet = true
  out.ecsFamily = family
  out.ecsSourcePrefix = source
  out.ecsScopePrefix = msg[data + 3]!
  return true
}

/**
 * The lookup key for the name's suffix starting at label `fromLabel`
 * (0 = the whole name): lower case, labels joined by '.', no trailing dot;
 * '' for the root or when `fromLabel >= labelCount`.
 *
 * Bytes outside [a-z0-9-_*] are escaped as in RFC 1035 §5.1 presentation
 * format (`\.` `\\` and `\DDD` for the rest), so a label holding a dot can
 * never collide with two labels: `a\.b.com` is not `a.b.com`.
 *
 * The first call per query builds the whole key once (latin1, no escaping in
 * the common case); later calls are substrings at label boundaries.
 */
export function keyOf(q: QueryScratch, fromLabel: number): string {
  if (!q.keyReady) buildKey(q)
  if (fromLabel >= q.labelCount) return ''
  if (fromLabel <= 0) return q.key
  if (q.suffixStamps[fromLabel] === q.stamp) return q.suffixes[fromLabel]! // stamped, so written
  // fromLabel < labelCount, so the start offset was written by buildKey/readQuery.
  const key = q.key.substring(q.needsEscape ? q.keyStarts[fromLabel]! : q.labelStarts[fromLabel]!)
  q.suffixes[fromLabel] = key
  q.suffixStamps[fromLabel] = q.stamp
  return key
}

/** The query name for logs: the whole key, or '.' for the root. Allocates. */
export function nameOf(q: QueryScratch): string {
  return q.labelCount === 0 ? '.' : keyOf(q, 0)
}

function buildKey(q: QueryScratch): void {
  q.keyReady = true
  if (!q.needsEscape) {
    q.key = q.nameBytes.toString('latin1', 0, q.nameLength)
    return
  }
  // Slow path: a byte needs escaping. Walk labels so that a 0x2e inside a
  // label is escaped and the separators are not.
  let s = ''
  const bytes = q.nameBytes
  const count = q.labelCount
  for (let k = 0; k < count; k++) {
    // k < labelCount, so labelStarts[k] was written by readQuery.
    const start = q.labelStarts[k]!
    const stop = k + 1 < count ? q.labelStarts[k + 1]! - 1 : q.nameLength
    if (k !== 0) s += '.'
    q.keyStarts[k] = s.length
    for (let j = start; j < stop; j++) {
      const c = bytes[j]! // j < nameLength <= nameBytes.length
      if (KEY_SAFE[c] === 1) s += String.fromCharCode(c)
      else if (c === 0x2e || c === 0x5c) s += '\\' + String.fromCharCode(c)
      else s += '\\' + (c < 10 ? '00' : c < 100 ? '0' : '') + c
    }
  }
  q.key = s
}

/** The ECS address as a string ('192.0.2.0', '2001:db8::'), '' when there is none. Allocates. */
export function ecsAddressOf(q: QueryScratch): string {
  if (!q.hasClientSubnet) return ''
  return q.ecsFamily === ECS_FAMILY_IPV4 ? formatIPv4(q.ecsAddress, 0) : formatIPv6(q.ecsAddress, 0)
}
