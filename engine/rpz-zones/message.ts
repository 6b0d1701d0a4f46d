/**
 * DNS messages of zone transfers, SOA queries and NOTIFY: a writer that packs records up to a size
 * limit (an AXFR of a large zone is many messages, RFC 5936 2.2) and a reader that returns every
 * section with its records' raw RDATA and where each record starts (TSIG needs the bytes before
 * its record). Owner names inside the zone are compressed against the question's name, which is
 * the zone's origin: one pointer per record, the bulk of the saving on a zone of many names.
 */
import { decodeName, encodeName, WireFormatError } from './names.js'

export const TYPE_A = 1
export const TYPE_NS = 2
export const TYPE_CNAME = 5
export const TYPE_SOA = 6
export const TYPE_TXT = 16
export const TYPE_AAAA = 28
export const TYPE_TSIG = 250
export const TYPE_IXFR = 251
export const TYPE_AXFR = 252
export const CLASS_IN = 1
export const CLASS_ANY = 255
export const OPCODE_QUERY = 0
export const OPCODE_NOTIFY = 4
export const RCODE_FORMERR = 1
export const RCODE_NOTIMP = 4
export const RCODE_REFUSED = 5
export const RCODE_NOTAUTH = 9

/** What transfers and NOTIFY need of a header. */
export interface Header {
  id: number
  qr: boolean
  opcode: number
  aa: boolean
  rcode: number
}

/** A record with its RDATA already in wire form (names inside RDATA uncompressed). */
export interface WireRecord {
  name: string
  type: number
  class: number
  ttl: number
  rdata: Buffer
}

export interface Question {
  name: string
  type: number
  class: number
}

/** A parsed message: `rdataStart` is each record's RDATA offset in `raw` (names in it may be pointers). */
export interface ParsedRecord extends WireRecord {
  /** Offset of the record's first byte in the message. */
  start: number
  rdataStart: number
}

export interface Message {
  header: Header
  question: Question[]
  answer: ParsedRecord[]
  authority: ParsedRecord[]
  additional: ParsedRecord[]
  raw: Buffer
}

function flags(h: Header): number {
  return (h.qr ? 0x8000 : 0) | ((h.opcode & 0xf) << 11) | (h.aa ? 0x0400 : 0) | (h.rcode & 0xf)
}

/**
 * Builds one message in a preallocated buffer. `add` returns false when the record does not fit
 * within `limit` (the caller starts the next message); a record larger than a whole message is
 * the caller's error.
 */
export class MessageWriter {
  private readonly buf: Buffer
  private readonly limit: number
  private pos = 12
  private counts = [0, 0, 0, 0]
  /** Wire form of the origin (the question name) and its offset, for owner compression. */
  private origin = ''
  private originOffset = -1

  constructor(header: Header, limit = 16384) {
    this.limit = limit
    this.buf = Buffer.alloc(limit)
    this.buf.writeUInt16BE(header.id, 0)
    this.buf.writeUInt16BE(flags(header), 2)
  }

  question(q: Question): void {
    const wire = encodeName(q.name)
    this.originOffset = this.pos
    this.origin = q.name.toLowerCase()
    wire.copy(this.buf, this.pos)
    this.pos += wire.length
    this.buf.writeUInt16BE(q.type, this.pos)
    this.buf.writeUInt16BE(q.class, this.pos + 2)
    this.pos += 4
    this.counts[0]!++
  }

  /** Adds `r` to section 1 (answer), 2 (authority) or 3 (additional); false when it does not fit. */
  add(r: WireRecord, section: 1 | 2 | 3 = 1): boolean {
    const owner = this.ownerBytes(r.name)
    const need = owner.length + 10 + r.rdata.length
    if (this.pos + need > this.limit) return false
    owner.copy(this.buf, this.pos)
    let p = this.pos + owner.length
    this.buf.writeUInt16BE(r.type, p)
    this.buf.writeUInt16BE(r.class, p + 2)
    this.buf.writeUInt32BE(r.ttl >>> 0, p + 4)
    this.buf.writeUInt16BE(r.rdata.length, p + 8)
    p += 10
    r.rdata.copy(this.buf, p)
    this.pos = p + r.rdata.length
    this.counts[section]!++
    return true
  }

  get recordCount(): number {
    return this.counts[1]! + this.counts[2]! + this.counts[3]!
  }

  /** The finished message (a copy: the writer may be dropped). */
  finish(): Buffer {
    for (let i = 0; i < 4; i++) this.buf.writeUInt16BE(this.counts[i]!, 4 + i * 2)
    return Buffer.from(this.buf.subarray(0, this.pos))
  }

  /** The owner as labels then a pointer to the origin when it lies under it, else in full. */
  private ownerBytes(name: string): Buffer {
    const lower = name.toLowerCase()
    if (this.originOffset >= 0 && this.origin !== '') {
      if (lower === this.origin) return pointer(this.originOffset)
      if (lower.endsWith('.' + this.origin)) {
        const rel = encodeName(name.slice(0, name.length - this.origin.length - 1))
        return Buffer.concat([rel.subarray(0, rel.length - 1), pointer(this.originOffset)])
      }
    }
    return encodeName(name)
  }
}

function pointer(offset: number): Buffer {
  return Buffer.from([0xc0 | (offset >> 8), offset & 0xff])
}

function readRecords(msg: Buffer, pos: number, count: number, out: ParsedRecord[]): number {
  for (let i = 0; i < count; i++) {
    const start = pos
    const { name, end } = decodeName(msg, pos)
    if (end + 10 > msg.length) throw new WireFormatError('truncated record')
    const type = msg.readUInt16BE(end)
    const klass = msg.readUInt16BE(end + 2)
    const ttl = msg.readUInt32BE(end + 4)
    const len = msg.readUInt16BE(end + 8)
    const rdataStart = end + 10
    if (rdataStart + len > msg.length) throw new WireFormatError('truncated rdata')
    out.push({ name, type, class: klass, ttl, rdata: msg.subarray(rdataStart, rdataStart + len), start, rdataStart })
    pos = rdataStart + len
  }
  return pos
}

/** Parses a whole message; throws WireFormatError on anything malformed or trailing bytes. */
export function parseMessage(msg: Buffer): Message {
  if (msg.length < 12) throw new WireFormatError('message shorter than a header')
  const f = msg.readUInt16BE(2)
  const header: Header = {
    id: msg.readUInt16BE(0),
    qr: (f & 0x8000) !== 0,
    opcode: (f >> 11) & 0xf,
    aa: (f & 0x0400) !== 0,
    rcode: f & 0xf
  }
  const qd = msg.readUInt16BE(4)
  let pos = 12
  const question: Question[] = []
  for (let i = 0; i < qd; i++) {
    const { name, end } = decodeName(msg, pos)
    if (end + 4 > msg.length) throw new WireFormatError('truncated question')
    question.push({ name, type: msg.readUInt16BE(end), class: msg.readUInt16BE(end + 2) })
    pos = end + 4
  }
  const answer: ParsedRecord[] = []
  const authority: ParsedRecord[] = []
  const additional: ParsedRecord[] = []
  pos = readRecords(msg, pos, msg.readUInt16BE(6), answer)
  pos = readRecords(msg, pos, msg.readUInt16BE(8), authority)
  pos = readRecords(msg, pos, msg.readUInt16BE(10), additional)
  if (pos !== msg.length) throw new WireFormatError('trailing bytes after the last record')
  return { header, question, answer, authority, additional, raw: msg }
}

/** A one-question query (SOA probe, AXFR, IXFR with `authority` holding the client's SOA, NOTIFY). */
export function buildQuery(
  id: number,
  q: Question,
  options: { opcode?: number; aa?: boolean; answer?: WireRecord[]; authority?: WireRecord[] } = {}
): Buffer {
  const w = new MessageWriter(
    { id, qr: false, opcode: options.opcode ?? OPCODE_QUERY, aa: options.aa ?? false, rcode: 0 },
    65535
  )
  w.question(q)
  for (const r of options.answer ?? []) w.add(r, 1)
  for (const r of options.authority ?? []) w.add(r, 2)
  return w.finish()
}

/** An answer with no records (REFUSED, NOTAUTH, FORMERR, the reply to a NOTIFY). */
export function buildEmptyReply(
  request: { id: number; opcode: number; question: Question[] },
  rcode: number,
  aa = false
): Buffer {
  const w = new MessageWriter({ id: request.id, qr: true, opcode: request.opcode, aa, rcode }, 512)
  const q = request.question[0]
  if (q !== undefined) w.question(q)
  return w.finish()
}
