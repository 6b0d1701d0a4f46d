/*
 * The dnstap message of one client exchange, encoded by hand into the Frame Streams writer's
 * chunk (./writer.ts): no object per message, no intermediate buffer. Field numbers are those of
 * dnstap.proto (github.com/dnstap/dnstap.pb):
 *
 *   Dnstap  { identity 1, version 2, extra 3, message 14, type 15 = MESSAGE }
 *   Message { type 1 = CLIENT_RESPONSE, socket_family 2, socket_protocol 3, query_address 4,
 *             query_port 6, query_time_sec 8, query_time_nsec 9, query_message 10,
 *             response_time_sec 12, response_time_nsec 13, response_message 14, policy 15 }
 *   Policy  { type 1, rule 2, action 3, match 4, value 5 }
 *
 * One CLIENT_RESPONSE per query carries both the client's query and our answer, as dnsdist's
 * DnstapLogResponseAction does: the pair is one frame, decoded whole by dnstap-ldns -y and
 * dnstap-read -y, and a consumer never has to join a query to its answer. `extra` carries
 * `client-id=<id>` when the query came with a client ID (DoH path, DoT server name).
 */
import { parseIpBytes } from '../net/index.js'
import type { FrameStreamWriter } from './writer.js'
import {
  lenFieldSize,
  varintFieldSize,
  varintSize,
  writeFixed32Field,
  writeLenHeader,
  writeVarintField
} from './protobuf.js'

export const MESSAGE_CLIENT_RESPONSE = 6
export const FAMILY_INET = 1
export const FAMILY_INET6 = 2
export const PROTOCOL_UDP = 1
export const PROTOCOL_TCP = 2
/** Policy.Action */
export const POLICY_NXDOMAIN = 1
export const POLICY_NODATA = 2
export const POLICY_PASS = 3
export const POLICY_DROP = 4
export const POLICY_TRUNCATE = 5
export const POLICY_LOCAL_DATA = 6
/** Policy.Match */
export const MATCH_QNAME = 1

const EMPTY = Buffer.alloc(0)
const POLICY_TYPE = Buffer.from('filterd')

/** One exchange to encode: a reusable, stable-shape object the caller fills (never kept). */
export class DnstapEvent {
  protocol = PROTOCOL_UDP
  /** The client's address as the socket reported it (IPv4 dotted quad or IPv6 text). */
  address = ''
  port = 0
  queryTimeMs = 0
  responseTimeMs = 0
  query: Buffer = EMPTY
  /** The client's own ID, written into the copy of `query` (its bytes may carry the upstream ID); -1 leaves it. */
  queryId = -1
  response: Buffer = EMPTY
  responseLength = 0
  /** Policy.rule (ASCII); '' when no policy applied (then no Policy message at all). */
  policyRule = ''
  policyAction = 0
  /** Policy.value: the matched name (text, no trailing dot; written in wire format); '' for none. */
  policyValue = ''
  /** Dnstap.extra (UTF-8 text); '' leaves the field out. */
  extra = ''
}

export interface DnstapIdentity {
  /** Dnstap.identity (the server's name); '' to leave it out. */
  identity: string
  /** Dnstap.version; '' to leave it out. */
  version: string
}

// Wire size of a presentation name without trailing dot ("a.b" -> 1 a 1 b 0).
function wireNameSize(name: string): number {
  return name.length === 0 ? 0 : name.length + 2
}

function writeWireName(buf: Buffer, off: number, name: string): number {
  let lenAt = off++
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i)
    if (c === 0x2e) {
      buf[lenAt] = off - lenAt - 1
      lenAt = off++
    } else {
      buf[off++] = c
    }
  }
  buf[lenAt] = off - lenAt - 1
  buf[off++] = 0
  return off
}

/**
 * Copies src[0..len) to dst at off; returns len. Buffer#copy goes through a new Uint8Array view per
 * call (Node 20's _copyActual), which costs more than the bytes here: a whole source is one
 * TypedArray#set, a short tail a loop.
 */
function copyInto(dst: Buffer, off: number, src: Uint8Array, len: number): number {
  if (len === src.length) dst.set(src, off)
  else if (len <= 64) for (let i = 0; i < len; i++) dst[off + i] = src[i]!
  else dst.set(src.subarray(0, len), off)
  return len
}

/** Writes a dotted-quad into `out` (4 bytes); false when `s` is not one. Allocation-free. */
function parseIPv4(s: string, out: Buffer): boolean {
  let part = 0
  let digits = 0
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0x2e) {
      if (digits === 0 || n > 2) return false
      out[n++] = part
      part = 0
      digits = 0
    } else if (c >= 0x30 && c <= 0x39 && digits < 3) {
      part = part * 10 + c - 0x30
      digits++
      if (part > 255) return false
    } else {
      return false
    }
  }
  if (digits === 0 || n !== 3) return false
  out[3] = part
  return true
}

/** Writes `address` into `out` (4 or 16 bytes); its length, 0 when it is not an IP address. */
function readAddress(address: string, out: Buffer): number {
  if (parseIPv4(address, out)) return 4
  // IPv6 (rarer, and the allocation-free path is IPv4's): the project's one IP parser.
  const b = parseIpBytes(address)
  if (b === undefined) return 0
  out.set(b)
  return b.length
}

/** The size of `e`'s Policy message body; 0 when no rule decided (no Policy message). */
function policySize(e: DnstapEvent): number {
  const ruleLen = e.policyRule.length
  if (ruleLen === 0) return 0
  const valueLen = wireNameSize(e.policyValue)
  return (
    lenFieldSize(POLICY_TYPE.length) +
    lenFieldSize(ruleLen) +
    (e.policyAction > 0 ? 2 : 0) +
    2 +
    (valueLen > 0 ? lenFieldSize(valueLen) : 0)
  )
}

/** Writes the Policy message body of `e` (policySize bytes) at `off`; the offset after it. */
function writePolicy(b: Buffer, off: number, e: DnstapEvent): number {
  const rule = e.policyRule
  off = writeLenHeader(b, off, 1, POLICY_TYPE.length)
  off += copyInto(b, off, POLICY_TYPE, POLICY_TYPE.length)
  off = writeLenHeader(b, off, 2, rule.length)
  for (let i = 0; i < rule.length; i++) b[off++] = rule.charCodeAt(i)
  if (e.policyAction > 0) off = writeVarintField(b, off, 3, e.policyAction)
  off = writeVarintField(b, off, 4, MATCH_QNAME)
  const valueLen = wireNameSize(e.policyValue)
  if (valueLen > 0) {
    off = writeLenHeader(b, off, 5, valueLen)
    off = writeWireName(b, off, e.policyValue)
  }
  return off
}

export class DnstapEncoder {
  private readonly writer: FrameStreamWriter
  /** identity and version fields, encoded once. */
  private readonly head: Buffer
  private readonly addr = Buffer.alloc(16)

  constructor(writer: FrameStreamWriter, id: DnstapIdentity) {
    this.writer = writer
    const parts: Buffer[] = []
    for (const [field, text] of [
      [1, id.identity],
      [2, id.version]
    ] as const) {
      if (text === '') continue
      const b = Buffer.from(text)
      const h = Buffer.alloc(1 + varintSize(b.length))
      writeLenHeader(h, 0, field, b.length)
      parts.push(h, b)
    }
    this.head = Buffer.concat(parts)
  }

  /** Encodes `e` as one frame; false when the writer dropped it (queue full). */
  write(e: DnstapEvent): boolean {
    const addr = this.addr
    const addrLen = readAddress(e.address, addr)
    const qsec = Math.floor(e.queryTimeMs / 1000)
    const rsec = Math.floor(e.responseTimeMs / 1000)
    const policyLen = policySize(e)
    const msgLen =
      2 +
      2 +
      2 +
      (addrLen > 0 ? lenFieldSize(addrLen) : 0) +
      varintFieldSize(e.port) +
      varintFieldSize(qsec) +
      5 +
      lenFieldSize(e.query.length) +
      varintFieldSize(rsec) +
      5 +
      lenFieldSize(e.responseLength) +
      (policyLen > 0 ? lenFieldSize(policyLen) : 0)
    const extraLen = e.extra === '' ? 0 : Buffer.byteLength(e.extra)
    const size = this.head.length + (extraLen > 0 ? lenFieldSize(extraLen) : 0) + 1 + varintSize(msgLen) + msgLen + 2
    const w = this.writer
    let off = w.beginFrame(size)
    if (off < 0) return false
    const b = w.chunk
    const end = off + size
    off += copyInto(b, off, this.head, this.head.length)
    if (extraLen > 0) {
      off = writeLenHeader(b, off, 3, extraLen)
      off += b.write(e.extra, off, 'utf8')
    }
    off = writeLenHeader(b, off, 14, msgLen)
    off = writeVarintField(b, off, 1, MESSAGE_CLIENT_RESPONSE)
    off = writeVarintField(b, off, 2, addrLen === 16 ? FAMILY_INET6 : FAMILY_INET)
    off = writeVarintField(b, off, 3, e.protocol)
    if (addrLen > 0) {
      off = writeLenHeader(b, off, 4, addrLen)
      off += copyInto(b, off, addr, addrLen)
    }
    off = writeVarintField(b, off, 6, e.port)
    off = writeVarintField(b, off, 8, qsec)
    off = writeFixed32Field(b, off, 9, (e.queryTimeMs - qsec * 1000) * 1_000_000)
    off = writeLenHeader(b, off, 10, e.query.length)
    const queryAt = off
    off += copyInto(b, off, e.query, e.query.length)
    if (e.queryId >= 0 && e.query.length >= 2) b.writeUInt16BE(e.queryId, queryAt)
    off = writeVarintField(b, off, 12, rsec)
    off = writeFixed32Field(b, off, 13, (e.responseTimeMs - rsec * 1000) * 1_000_000)
    off = writeLenHeader(b, off, 14, e.responseLength)
    off += copyInto(b, off, e.response, e.responseLength)
    if (policyLen > 0) off = writePolicy(b, writeLenHeader(b, off, 15, policyLen), e)
    b[off++] = 15 << 3 // Dnstap.type = MESSAGE
    b[off++] = 1
    if (off !== end) throw new Error(`dnstap: encoded ${off - end + size} bytes, sized ${size}`)
    return true
  }
}
