/*
 * Answers written by patching, not encoding: the query's header and question
 * bytes are copied into a caller-owned Buffer, the flags are set, and at most
 * a few RRs plus one OPT are appended. The question is copied byte for byte
 * so the client's 0x20 case randomisation survives; answer owner names are a
 * compression pointer to the question name at offset 12 (0xC00C).
 *
 * Writers return the answer's length; send `out.subarray(0, len)` or
 * `send(out, 0, len)`. `ANSWER_BUFFER_SIZE` bytes always fit a block or error
 * answer. `decodeAddresses` (upstream responses) is the only function here
 * that uses dns-packet: it runs on the slow safe-video path only.
 */
import assert from 'node:assert'
import dnsPacket from 'dns-packet'
import {
  EDNS_FLAG_DO,
  EDNS_OPTION_EDE,
  EDE_BLOCKED,
  FLAG_CD,
  FLAG_QR,
  FLAG_RA,
  FLAG_RD,
  FLAG_TC,
  HEADER_SIZE,
  OPCODE_MASK,
  QCLASS_IN,
  QTYPE_A,
  QTYPE_AAAA,
  QTYPE_CNAME,
  QTYPE_OPT,
  RCODE_MASK,
  RCODE_FORMERR,
  RCODE_NOERROR,
  ANSWER_BUFFER_SIZE,
  CLASSIC_UDP_SIZE,
  EDNS_UDP_PAYLOAD_SIZE,
  MAX_EDE_EXTRA_TEXT
} from './constants.js'
import { parseIPv4Into, parseIPv6Into } from './ip.js'
import type { QueryScratch } from './query.js'

/** What a blocked name is answered with; build it once with `compileBlockAnswer`. */
export interface BlockAnswerOptions {
  /** 4 bytes, or null: A queries get NODATA. */
  readonly ipv4: Buffer | null
  /** 16 bytes, or null: AAAA queries get NODATA. */
  readonly ipv6: Buffer | null
  readonly ttl: number
  /** RFC 8914 INFO-CODE: EDE_BLOCKED (15) or EDE_FILTERED (17); -1 for no EDE option. */
  readonly edeInfoCode: number
  /** UTF-8 EXTRA-TEXT, at most MAX_EDE_EXTRA_TEXT bytes; null for none. */
  readonly edeExtraText: Buffer | null
}

/** Compiles block-answer settings from config text (allocates; call at start or reload, not per packet). */
export function compileBlockAnswer(opts: {
  ipv4?: string | undefined
  ipv6?: string | undefined
  ttl?: number | undefined
  edeInfoCode?: number | undefined
  edeExtraText?: string | undefined
}): BlockAnswerOptions {
  let ipv4: Buffer | null = null
  let ipv6: Buffer | null = null
  if (opts.ipv4 !== undefined) {
    ipv4 = Buffer.alloc(4)
    if (!parseIPv4Into(opts.ipv4, ipv4, 0)) throw new TypeError(`not an IPv4 address: ${opts.ipv4}`)
  }
  if (opts.ipv6 !== undefined) {
    ipv6 = Buffer.alloc(16)
    if (!parseIPv6Into(opts.ipv6, ipv6, 0)) throw new TypeError(`not an IPv6 address: ${opts.ipv6}`)
  }
  return Object.freeze({
    ipv4,
    ipv6,
    ttl: clampTtl(opts.ttl ?? 60),
    edeInfoCode: opts.edeInfoCode ?? EDE_BLOCKED,
    edeExtraText:
      opts.edeExtraText === undefined || opts.edeExtraText === ''
        ? null
        : clipUtf8(opts.edeExtraText, MAX_EDE_EXTRA_TEXT)
  })
}

/** Encodes EXTRA-TEXT once (for writeErrorAnswer's `edeExtraText`), clipped to MAX_EDE_EXTRA_TEXT bytes. */
export function compileEdeText(text: string): Buffer {
  return clipUtf8(text, MAX_EDE_EXTRA_TEXT)
}

function clipUtf8(text: string, max: number): Buffer {
  const buf = Buffer.from(text, 'utf8')
  if (buf.length <= max) return buf
  // Cut on a character boundary: back off continuation bytes (10xxxxxx).
  let n = max
  while (n > 0 && (buf[n]! & 0xc0) === 0x80) n-- // n <= max < buf.length
  return Buffer.from(buf.subarray(0, n))
}

function clampTtl(ttl: number): number {
  // RFC 2181 §8: TTLs are 31-bit unsigned.
  return Math.max(0, Math.min(0x7fffffff, Math.floor(ttl)))
}

/**
 * Writes the answer to a blocked query into `out` and returns its length:
 * QR, RA, RD and CD copied, AA off, NOERROR; for class IN, an A query gets
 * `opts.ipv4` and an AAAA query `opts.ipv6`; everything else (HTTPS, SVCB,
 * MX …) and a missing address get NODATA. When the query had EDNS, an OPT
 * with the EDE option is appended (RFC 8914 §2). `q` must come from a
 * QUERY_OK `readQuery` of `msg`; `out` needs ANSWER_BUFFER_SIZE bytes.
 */
export function writeBlockAnswer(msg: Buffer, q: QueryScratch, out: Buffer, opts: BlockAnswerOptions): number {
  assert(
    q.questionEnd > HEADER_SIZE && out.length >= ANSWER_BUFFER_SIZE,
    'writeBlockAnswer needs a parsed query and ANSWER_BUFFER_SIZE bytes'
  )
  let addr: Buffer | null = null
  if (q.qclass === QCLASS_IN) {
    if (q.qtype === QTYPE_A) addr = opts.ipv4
    else if (q.qtype === QTYPE_AAAA) addr = opts.ipv6
  }
  let p = writeHeaderAndQuestion(msg, q, out, RCODE_NOERROR, addr === null ? 0 : 1)
  if (addr !== null) {
    p = writeRRHead(out, p, q.qtype, opts.ttl, addr.length)
    for (let k = 0; k < addr.length; k++) out[p++] = addr[k]! // k < addr.length
  }
  if (q.hasEdns) p = writeOpt(out, p, q, 0, opts.edeInfoCode, opts.edeExtraText)
  return p
}

/**
 * Writes an error answer (FORMERR, NOTIMP, SERVFAIL, REFUSED, BADVERS …)
 * and returns its length. ID, opcode, RD and CD come from `msg`; the
 * question is echoed when `q` parsed one (QDCOUNT 1), else QDCOUNT 0. An
 * OPT is appended when the query had one, with an EDE option when
 * `edeInfoCode >= 0` (e.g. EDE_NO_REACHABLE_AUTHORITY for an upstream
 * timeout). Extended RCODEs (> 15) need the query's OPT; without one they
 * are sent as FORMERR. `out` needs ANSWER_BUFFER_SIZE bytes.
 */
export function writeErrorAnswer(
  msg: Buffer,
  q: QueryScratch | null,
  rcode: number,
  out: Buffer,
  edeInfoCode = -1,
  edeExtraText: Buffer | null = null
): number {
  assert(out.length >= ANSWER_BUFFER_SIZE, 'writeErrorAnswer needs ANSWER_BUFFER_SIZE bytes')
  const hasQuestion = q !== null && q.questionEnd > HEADER_SIZE && q.questionEnd <= msg.length
  const hasEdns = q !== null && q.hasEdns
  if (rcode > RCODE_MASK && !hasEdns) rcode = RCODE_FORMERR // cannot express it without OPT
  out.fill(0, 0, HEADER_SIZE)
  if (msg.length >= 2) {
    out[0] = msg[0]!
    out[1] = msg[1]!
  } // length checked
  const qflags = msg.length >= 4 ? (msg[2]! << 8) | msg[3]! : 0 // length checked
  const flags = FLAG_QR | (qflags & (OPCODE_MASK | FLAG_RD | FLAG_CD)) | FLAG_RA | (rcode & RCODE_MASK)
  out[2] = flags >>> 8
  out[3] = flags & 0xff
  let p = HEADER_SIZE
  if (hasQuestion) {
    out[5] = 1
    p += msg.copy(out, HEADER_SIZE, HEADER_SIZE, q.questionEnd)
  }
  if (hasEdns) {
    out[11] = 1
    p = writeOpt(out, p, q, rcode >>> 4, edeInfoCode, edeExtraText)
  }
  return p
}

/** An address record for `writeCnameAnswer` (what `decodeAddresses` returns). */
export interface AddressRecord {
  type: 'A' | 'AAAA'
  data: string
  ttl: number
}

/**
 * Writes a rewrite answer for safe video: a CNAME from the question name to
 * `target` (e.g. 'restrict.youtube.com'), then those `addrs` whose type
 * matches the query's type, owned by the target (a pointer to it). Returns
 * the length. Records that would push the answer past `maxSize` (default:
 * the client's UDP limit, 512 without EDNS) are left out and TC is set
 * (RFC 2181 §9). Unparseable addresses are skipped.
 */
export function writeCnameAnswer(
  msg: Buffer,
  q: QueryScratch,
  target: string,
  addrs: readonly AddressRecord[],
  out: Buffer,
  opts: { cnameTtl?: number; maxSize?: number } = {}
): number {
  assert(
    q.questionEnd > HEADER_SIZE && out.length >= ANSWER_BUFFER_SIZE,
    'writeCnameAnswer needs a parsed query and ANSWER_BUFFER_SIZE bytes'
  )
  const clientMax = q.hasEdns ? Math.max(CLASSIC_UDP_SIZE, q.udpPayloadSize) : CLASSIC_UDP_SIZE
  const limit = Math.min(out.length, opts.maxSize ?? clientMax) - (q.hasEdns ? 11 : 0) // room for OPT
  let p = writeHeaderAndQuestion(msg, q, out, RCODE_NOERROR, 0)
  // CNAME RR: owner = question name; RDATA = the target written uncompressed.
  const rdata = p + 12
  const targetEnd = writeName(target, out, rdata)
  assert(targetEnd > 0 && targetEnd <= limit, 'safe-video target name does not fit')
  writeRRHead(out, p, QTYPE_CNAME, clampTtl(opts.cnameTtl ?? minTtl(addrs, 300)), targetEnd - rdata)
  p = targetEnd
  let count = 1
  let truncated = false
  const want = q.qclass === QCLASS_IN && (q.qtype === QTYPE_A || q.qtype === QTYPE_AAAA) ? q.qtype : 0
  for (const a of addrs) {
    const type = a.type === 'A' ? QTYPE_A : QTYPE_AAAA
    if (type !== want) continue
    const size = type === QTYPE_A ? 4 : 16
    if (p + 12 + size > limit) {
      truncated = true
      break
    }
    const ok = type === QTYPE_A ? parseIPv4Into(a.data, out, p + 12) : parseIPv6Into(a.data, out, p + 12)
    if (!ok) continue
    // Owner: pointer to the target name inside the CNAME RDATA (rdata < 0x3fff).
    writeRRHead(out, p, type, clampTtl(a.ttl), size, 0xc000 | rdata)
    p += 12 + size
    count++
  }
  out[6] = count >>> 8
  out[7] = count & 0xff
  if (truncated) out[2] = out[2]! | (FLAG_TC >>> 8) // out[2] written by writeHeaderAndQuestion
  if (q.hasEdns) p = writeOpt(out, p, q, 0, -1, null)
  return p
}

function minTtl(addrs: readonly AddressRecord[], fallback: number): number {
  let m = -1
  for (const a of addrs) if (m < 0 || a.ttl < m) m = a.ttl
  return m < 0 ? fallback : m
}

// Header + copied question; returns the offset after the question.
function writeHeaderAndQuestion(msg: Buffer, q: QueryScratch, out: Buffer, rcode: number, ancount: number): number {
  const flags = FLAG_QR | (q.flags & (FLAG_RD | FLAG_CD)) | FLAG_RA | rcode
  out[0] = q.id >>> 8
  out[1] = q.id & 0xff
  out[2] = flags >>> 8
  out[3] = flags & 0xff
  out[4] = 0
  out[5] = 1
  out[6] = ancount >>> 8
  out[7] = ancount & 0xff
  out[8] = 0
  out[9] = 0
  out[10] = 0
  out[11] = q.hasEdns ? 1 : 0
  // A byte loop: questions are short, and Buffer#copy's call overhead dominates at this size.
  const end = q.questionEnd
  for (let i = HEADER_SIZE; i < end; i++) out[i] = msg[i]! // questionEnd <= msg.length (readQuery)
  return end
}

// NAME (a pointer, default the question at 12), TYPE, CLASS IN, TTL, RDLENGTH; returns offset of RDATA.
function writeRRHead(out: Buffer, p: number, type: number, ttl: number, rdlen: number, ptr = 0xc00c): number {
  out[p] = ptr >>> 8
  out[p + 1] = ptr & 0xff
  out[p + 2] = type >>> 8
  out[p + 3] = type & 0xff
  out[p + 4] = 0
  out[p + 5] = QCLASS_IN
  out[p + 6] = ttl >>> 24
  out[p + 7] = (ttl >>> 16) & 0xff
  out[p + 8] = (ttl >>> 8) & 0xff
  out[p + 9] = ttl & 0xff
  out[p + 10] = rdlen >>> 8
  out[p + 11] = rdlen & 0xff
  return p + 12
}

// OPT RR (RFC 6891 §6.1.2): root owner, our UDP size, extended RCODE high
// bits, version 0, DO copied from the query (RFC 3225 §3), optional EDE.
function writeOpt(
  out: Buffer,
  p: number,
  q: QueryScratch,
  extRcode: number,
  edeCode: number,
  edeText: Buffer | null
): number {
  const hasEde = edeCode >= 0
  const textLen = edeText === null ? 0 : edeText.length
  const rdlen = hasEde ? 6 + textLen : 0
  out[p] = 0
  out[p + 1] = QTYPE_OPT >>> 8
  out[p + 2] = QTYPE_OPT & 0xff
  out[p + 3] = EDNS_UDP_PAYLOAD_SIZE >>> 8
  out[p + 4] = EDNS_UDP_PAYLOAD_SIZE & 0xff
  out[p + 5] = extRcode & 0xff
  out[p + 6] = 0
  out[p + 7] = q.isDnssecOk ? EDNS_FLAG_DO >>> 8 : 0
  out[p + 8] = 0
  out[p + 9] = rdlen >>> 8
  out[p + 10] = rdlen & 0xff
  p += 11
  if (hasEde) {
    out[p] = 0
    out[p + 1] = EDNS_OPTION_EDE
    out[p + 2] = (2 + textLen) >>> 8
    out[p + 3] = (2 + textLen) & 0xff
    out[p + 4] = edeCode >>> 8
    out[p + 5] = edeCode & 0xff
    p += 6
    if (edeText !== null) for (let k = 0; k < textLen; k++) out[p++] = edeText[k]! // k < edeText.length
  }
  return p
}

// Writes a presentation-form host name ('a.b.c', trailing dot optional) as
// uncompressed wire labels; returns the end offset, or -1 if it is not a
// plain ASCII name of legal length.
function writeName(name: string, out: Buffer, off: number): number {
  let p = off
  let lenAt = p++
  let len = 0
  const n = name.endsWith('.') ? name.length - 1 : name.length
  for (let k = 0; k < n; k++) {
    const c = name.charCodeAt(k)
    if (c === 0x2e) {
      if (len === 0) return -1
      out[lenAt] = len
      lenAt = p++
      len = 0
      continue
    }
    if (c > 0x7e || c <= 0x20 || ++len > 63 || p - off >= 254) return -1
    out[p++] = c
  }
  if (n > 0) {
    if (len === 0) return -1
    out[lenAt] = len
    out[p++] = 0
  } else {
    out[lenAt] = 0
  }
  return p
}

/**
 * Decodes an upstream response's RCODE and its A/AAAA records (any owner,
 * so a CNAME chain's addresses count). Slow path (dns-packet); allocates.
 * Returns undefined for a message dns-packet cannot decode.
 */
export function decodeAddresses(response: Buffer): { rcode: number; records: AddressRecord[] } | undefined {
  let packet: dnsPacket.DecodedPacket
  try {
    packet = dnsPacket.decode(response)
  } catch {
    return undefined
  }
  const records: AddressRecord[] = []
  for (const a of packet.answers ?? []) {
    if ((a.type === 'A' || a.type === 'AAAA') && typeof a.data === 'string') {
      records.push({ type: a.type, data: a.data, ttl: a.ttl ?? 0 })
    }
  }
  return { rcode: response.length >= 4 ? response[3]! & RCODE_MASK : 0, records } // length checked
}
