/**
 * TSIG (RFC 8945): signs and verifies messages with a shared HMAC key. A transfer is a stream of
 * messages; each signed message's MAC covers the previous MAC, the messages since it, and the
 * timers (5.3.1), so a stream cannot be cut, reordered or spliced without the next MAC failing.
 * Every message we send is signed; a stream we receive may leave messages unsigned in between
 * (older primaries sign every few), which then go into the next signed message's digest.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { decodeName, encodeName, WireFormatError } from './names.js'
import { CLASS_ANY, parseMessage, TYPE_TSIG, type Message } from './message.js'

/** RFC 8945 algorithm names and the node:crypto digests behind them. */
const ALGORITHMS: Readonly<Record<string, string>> = {
  'hmac-md5.sig-alg.reg.int': 'md5',
  'hmac-sha1': 'sha1',
  'hmac-sha224': 'sha224',
  'hmac-sha256': 'sha256',
  'hmac-sha384': 'sha384',
  'hmac-sha512': 'sha512'
}

/** TSIG error codes (RFC 8945 3). */
export const TSIG_BADSIG = 16
export const TSIG_BADKEY = 17
export const TSIG_BADTIME = 18

export interface TsigKey {
  /** Key name, lower case, no trailing dot. */
  name: string
  algorithm: string
  secret: Buffer
}

/** A key from config text (`secret` base64, as BIND and Knot print it); throws naming what is wrong. */
export function tsigKey(name: string, algorithm: string, secret: string): TsigKey {
  const alg = algorithm.toLowerCase().replace(/\.$/, '')
  if (ALGORITHMS[alg] === undefined) throw new Error(`unknown TSIG algorithm ${algorithm}`)
  const bytes = Buffer.from(secret, 'base64')
  if (bytes.length === 0) throw new Error(`TSIG key ${name}: empty or not base64 secret`)
  return { name: name.toLowerCase().replace(/\.$/, ''), algorithm: alg, secret: bytes }
}

const FUDGE = 300

interface TsigRecord {
  keyName: string
  algorithm: string
  timeSigned: number
  fudge: number
  mac: Buffer
  originalId: number
  error: number
  other: Buffer
}

function uint48(n: number): Buffer {
  const b = Buffer.alloc(6)
  b.writeUIntBE(n, 0, 6)
  return b
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(n, 0)
  return b
}

function variables(key: TsigKey, t: Omit<TsigRecord, 'mac' | 'originalId' | 'keyName' | 'algorithm'>): Buffer {
  return Buffer.concat([
    encodeName(key.name),
    u16(CLASS_ANY),
    Buffer.alloc(4),
    encodeName(key.algorithm),
    uint48(t.timeSigned),
    u16(t.fudge),
    u16(t.error),
    u16(t.other.length),
    t.other
  ])
}

function timers(t: { timeSigned: number; fudge: number }): Buffer {
  return Buffer.concat([uint48(t.timeSigned), u16(t.fudge)])
}

function hmac(key: TsigKey, parts: readonly Buffer[]): Buffer {
  const h = createHmac(ALGORITHMS[key.algorithm]!, key.secret)
  for (const p of parts) h.update(p)
  return h.digest()
}

function withMacPrefix(mac: Buffer | undefined): Buffer[] {
  return mac === undefined ? [] : [u16(mac.length), mac]
}

function tsigRecordBytes(key: TsigKey, t: TsigRecord): Buffer {
  const rdata = Buffer.concat([
    encodeName(key.algorithm),
    uint48(t.timeSigned),
    u16(t.fudge),
    u16(t.mac.length),
    t.mac,
    u16(t.originalId),
    u16(t.error),
    u16(t.other.length),
    t.other
  ])
  const head = Buffer.alloc(10)
  head.writeUInt16BE(TYPE_TSIG, 0)
  head.writeUInt16BE(CLASS_ANY, 2)
  head.writeUInt32BE(0, 4)
  head.writeUInt16BE(rdata.length, 8)
  return Buffer.concat([encodeName(key.name), head, rdata])
}

function appendRecord(msg: Buffer, record: Buffer): Buffer {
  const out = Buffer.concat([msg, record])
  out.writeUInt16BE(msg.readUInt16BE(10) + 1, 10)
  return out
}

/**
 * Signs a stream of messages we send: a request (`requestMac` undefined) or the answers to a
 * signed request (`requestMac` its MAC). `next` signs each message in order; the first is signed
 * with all variables, the later ones with the timers only.
 */
export class TsigSigner {
  private prior: Buffer | undefined
  private first = true
  private readonly key: TsigKey
  private readonly error: number

  constructor(key: TsigKey, requestMac?: Buffer, error = 0) {
    this.key = key
    this.prior = requestMac
    this.error = error
  }

  next(msg: Buffer, now = Date.now()): Buffer {
    const t = { timeSigned: Math.floor(now / 1000), fudge: FUDGE, error: this.error, other: Buffer.alloc(0) }
    const parts = [...withMacPrefix(this.prior), msg, this.first ? variables(this.key, t) : timers(t)]
    const mac = hmac(this.key, parts)
    this.first = false
    this.prior = mac
    const record = { ...t, mac, originalId: msg.readUInt16BE(0), keyName: this.key.name, algorithm: this.key.algorithm }
    return appendRecord(msg, tsigRecordBytes(this.key, record))
  }

  /** The MAC of the last message signed (a request's, to verify its answers with). */
  get mac(): Buffer | undefined {
    return this.prior
  }
}

/** The TSIG record of `m` (the last additional record) and the message bytes before it, as signed. */
function splitTsig(m: Message): { tsig: TsigRecord; signed: Buffer } | undefined {
  const last = m.additional[m.additional.length - 1]
  if (last === undefined || last.type !== TYPE_TSIG) return undefined
  for (const r of [...m.answer, ...m.authority, ...m.additional.slice(0, -1)])
    if (r.type === TYPE_TSIG) throw new WireFormatError('TSIG record not last')
  const raw = m.raw
  const alg = decodeName(raw, last.rdataStart)
  let p = alg.end
  const end = last.rdataStart + last.rdata.length
  if (p + 10 > end) throw new WireFormatError('bad TSIG rdata')
  const timeSigned = raw.readUIntBE(p, 6)
  const fudge = raw.readUInt16BE(p + 6)
  const macLen = raw.readUInt16BE(p + 8)
  p += 10
  if (p + macLen + 6 > end) throw new WireFormatError('bad TSIG rdata')
  const mac = Buffer.from(raw.subarray(p, p + macLen))
  p += macLen
  const originalId = raw.readUInt16BE(p)
  const error = raw.readUInt16BE(p + 2)
  const otherLen = raw.readUInt16BE(p + 4)
  if (p + 6 + otherLen !== end) throw new WireFormatError('bad TSIG rdata')
  const other = Buffer.from(raw.subarray(p + 6, end))
  const signed = Buffer.from(raw.subarray(0, last.start))
  signed.writeUInt16BE(originalId, 0)
  signed.writeUInt16BE(raw.readUInt16BE(10) - 1, 10)
  const tsig = { keyName: last.name, algorithm: alg.name, timeSigned, fudge, mac, originalId, error, other }
  return { tsig, signed }
}

export type TsigCheck =
  { ok: true; key: TsigKey; mac: Buffer } | { ok: false; signed: boolean; error: number; why: string; key?: TsigKey }

/**
 * Verifies a stream of messages we receive: requests (`requestMac` undefined, `keys` the keys we
 * accept) or the answers to a request we signed (`requestMac` its MAC, `keys` that one key).
 */
export class TsigVerifier {
  private prior: Buffer | undefined
  private first = true
  private pending: Buffer[] = []
  private key: TsigKey | undefined
  private readonly keys: ReadonlyMap<string, TsigKey>

  constructor(keys: ReadonlyMap<string, TsigKey>, requestMac?: Buffer) {
    this.keys = keys
    this.prior = requestMac
  }

  /** Checks one message; an unsigned one is accepted only between signed ones of a stream (`unsignedOk`). */
  check(m: Message, now = Date.now(), unsignedOk = false): TsigCheck {
    const split = splitTsig(m)
    if (split === undefined) {
      if (!this.first && unsignedOk) {
        this.pending.push(m.raw)
        return { ok: true, key: this.key!, mac: this.prior! }
      }
      return { ok: false, signed: false, error: 0, why: 'message not signed' }
    }
    const { tsig, signed } = split
    const key = this.key ?? this.keys.get(tsig.keyName)
    if (key === undefined || key.name !== tsig.keyName || key.algorithm !== tsig.algorithm)
      return {
        ok: false,
        signed: true,
        error: TSIG_BADKEY,
        why: `unknown TSIG key ${tsig.keyName} (${tsig.algorithm})`
      }
    const body = [...this.pending, signed]
    const parts = [...withMacPrefix(this.prior), ...body, this.first ? variables(key, tsig) : timers(tsig)]
    const expect = hmac(key, parts)
    if (expect.length !== tsig.mac.length || !timingSafeEqual(expect, tsig.mac))
      return { ok: false, signed: true, error: TSIG_BADSIG, why: `bad TSIG signature (key ${key.name})`, key }
    if (Math.abs(Math.floor(now / 1000) - tsig.timeSigned) > tsig.fudge)
      return { ok: false, signed: true, error: TSIG_BADTIME, why: 'TSIG time outside the fudge', key }
    this.first = false
    this.pending = []
    this.prior = tsig.mac
    this.key = key
    return { ok: true, key, mac: tsig.mac }
  }
}

/** Parses `raw` and returns it with its TSIG record removed (what the caller reads). */
export function stripTsig(raw: Buffer): Message {
  const m = parseMessage(raw)
  const last = m.additional[m.additional.length - 1]
  if (last?.type === TYPE_TSIG) m.additional.pop()
  return m
}
