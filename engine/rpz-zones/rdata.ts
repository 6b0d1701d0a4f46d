/**
 * RDATA of the record types RPZ zones hold, both ways: SOA, CNAME, NS, A, AAAA, TXT. Names inside
 * RDATA are written uncompressed (RFC 3597: only the well-known types may be compressed, and
 * keeping them whole lets a record move between messages unchanged) and read with pointers followed.
 */
import { decodeName, encodeName, WireFormatError } from './names.js'
import { TYPE_A, TYPE_AAAA, TYPE_CNAME, TYPE_NS, TYPE_SOA, TYPE_TXT, type ParsedRecord } from './message.js'
import { formatIp, parseIpBytes } from '../net/index.js'

export interface Soa {
  mname: string
  rname: string
  serial: number
  refresh: number
  retry: number
  expire: number
  minimum: number
}

export function soaRdata(s: Soa): Buffer {
  const tail = Buffer.alloc(20)
  tail.writeUInt32BE(s.serial >>> 0, 0)
  tail.writeUInt32BE(s.refresh >>> 0, 4)
  tail.writeUInt32BE(s.retry >>> 0, 8)
  tail.writeUInt32BE(s.expire >>> 0, 12)
  tail.writeUInt32BE(s.minimum >>> 0, 16)
  return Buffer.concat([encodeName(s.mname), encodeName(s.rname), tail])
}

export function readSoa(msg: Buffer, r: ParsedRecord): Soa {
  if (r.type !== TYPE_SOA) throw new WireFormatError('not an SOA record')
  const m = decodeName(msg, r.rdataStart)
  const n = decodeName(msg, m.end)
  const p = n.end
  if (p + 20 !== r.rdataStart + r.rdata.length) throw new WireFormatError('bad SOA rdata')
  return {
    mname: m.name,
    rname: n.name,
    serial: msg.readUInt32BE(p),
    refresh: msg.readUInt32BE(p + 4),
    retry: msg.readUInt32BE(p + 8),
    expire: msg.readUInt32BE(p + 12),
    minimum: msg.readUInt32BE(p + 16)
  }
}

function addressRdata(text: string, size: 4 | 16): Buffer {
  const b = parseIpBytes(text)
  if (b === undefined || b.length !== size) throw new WireFormatError(`bad address ${text}`)
  return Buffer.from(b)
}

/**
 * RDATA in presentation form (`type` is a record type number): a name for CNAME/NS, an address for
 * A/AAAA, the text for TXT (one string of at most 255 bytes).
 */
export function rdataFromText(type: number, text: string): Buffer {
  switch (type) {
    case TYPE_CNAME:
    case TYPE_NS:
      return encodeName(text)
    case TYPE_A:
      return addressRdata(text, 4)
    case TYPE_AAAA:
      return addressRdata(text, 16)
    case TYPE_TXT: {
      const b = Buffer.from(text, 'utf8')
      if (b.length > 255) throw new WireFormatError('TXT string over 255 bytes')
      return Buffer.concat([Buffer.from([b.length]), b])
    }
    default:
      throw new WireFormatError(`record type ${type} not supported in RPZ zones`)
  }
}

/**
 * A parsed record's RDATA as presentation text (the inverse of `rdataFromText`); other types come
 * back as `\# len hex` (RFC 3597), so they are kept and compared, never guessed.
 */
export function rdataToText(msg: Buffer, r: ParsedRecord): string {
  switch (r.type) {
    case TYPE_CNAME:
    case TYPE_NS: {
      const { name, end } = decodeName(msg, r.rdataStart)
      if (end !== r.rdataStart + r.rdata.length) throw new WireFormatError('bad name rdata')
      return name
    }
    case TYPE_A:
      if (r.rdata.length !== 4) throw new WireFormatError('bad A rdata')
      return formatIp(r.rdata)
    case TYPE_AAAA:
      if (r.rdata.length !== 16) throw new WireFormatError('bad AAAA rdata')
      return formatIp(r.rdata)
    case TYPE_TXT: {
      const parts: string[] = []
      for (let p = 0; p < r.rdata.length;) {
        const len = r.rdata[p]!
        if (p + 1 + len > r.rdata.length) throw new WireFormatError('bad TXT rdata')
        parts.push(r.rdata.toString('utf8', p + 1, p + 1 + len))
        p += 1 + len
      }
      return parts.join('')
    }
    default:
      return `\\# ${r.rdata.length} ${r.rdata.toString('hex')}`
  }
}
