/*
 * A test-side reader of dnstap files, written from dnstap.proto's field numbers (github.com/
 * dnstap/dnstap.pb) and fstrm's file format, independently of the encoder: the Debian readers
 * (dnstap-ldns, dnstap-read) predate the Policy message, so the tests check Policy with this.
 */

export interface DecodedPolicy {
  type?: string
  rule?: string
  action?: number
  match?: number
  /** The matched value as raw bytes. */
  value?: Buffer
}

export interface DecodedMessage {
  type: number
  socketFamily?: number
  socketProtocol?: number
  queryAddress?: Buffer
  queryPort?: number
  queryTimeSec?: number
  queryTimeNsec?: number
  queryMessage?: Buffer
  responseTimeSec?: number
  responseTimeNsec?: number
  responseMessage?: Buffer
  policy?: DecodedPolicy
}

export interface DecodedDnstap {
  identity?: string
  version?: string
  /** Dnstap.extra as text. */
  extra?: string
  type: number
  message?: DecodedMessage
}

type Field = number | Buffer

/** The fields of one protobuf message by number (varint, fixed32, fixed64 as numbers; LEN as bytes). */
export function protobufFields(buf: Buffer): Map<number, Field[]> {
  const out = new Map<number, Field[]>()
  let off = 0
  const varint = (): number => {
    let n = 0
    let mul = 1
    for (;;) {
      if (off >= buf.length) throw new Error('protobuf: truncated varint')
      const b = buf[off++]!
      n += (b & 0x7f) * mul
      mul *= 128
      if ((b & 0x80) === 0) return n
    }
  }
  while (off < buf.length) {
    const key = varint()
    const field = Math.floor(key / 8)
    const wire = key % 8
    let value: Field
    if (wire === 0) value = varint()
    else if (wire === 5) {
      value = buf.readUInt32LE(off)
      off += 4
    } else if (wire === 1) {
      value = Number(buf.readBigUInt64LE(off))
      off += 8
    } else if (wire === 2) {
      const len = varint()
      if (off + len > buf.length) throw new Error(`protobuf: field ${field} overruns the message`)
      value = buf.subarray(off, off + len)
      off += len
    } else throw new Error(`protobuf: wire type ${wire}`)
    const list = out.get(field) ?? []
    list.push(value)
    out.set(field, list)
  }
  return out
}

function one<T extends Field>(f: Map<number, Field[]>, n: number, kind: 'number' | 'bytes'): T | undefined {
  const v = f.get(n)?.[0]
  if (v === undefined) return undefined
  if ((kind === 'number') !== (typeof v === 'number')) throw new Error(`protobuf: field ${n} has the wrong wire type`)
  return v as T
}

export function decodeDnstap(frame: Buffer): DecodedDnstap {
  const f = protobufFields(frame)
  const m = one<Buffer>(f, 14, 'bytes')
  return {
    identity: one<Buffer>(f, 1, 'bytes')?.toString(),
    version: one<Buffer>(f, 2, 'bytes')?.toString(),
    extra: one<Buffer>(f, 3, 'bytes')?.toString(),
    type: one<number>(f, 15, 'number') ?? 0,
    message: m === undefined ? undefined : decodeMessage(m)
  }
}

function decodeMessage(buf: Buffer): DecodedMessage {
  const f = protobufFields(buf)
  const p = one<Buffer>(f, 15, 'bytes')
  let policy: DecodedPolicy | undefined
  if (p !== undefined) {
    const pf = protobufFields(p)
    policy = {
      type: one<Buffer>(pf, 1, 'bytes')?.toString(),
      rule: one<Buffer>(pf, 2, 'bytes')?.toString(),
      action: one<number>(pf, 3, 'number'),
      match: one<number>(pf, 4, 'number'),
      value: one<Buffer>(pf, 5, 'bytes')
    }
  }
  return {
    type: one<number>(f, 1, 'number') ?? 0,
    socketFamily: one<number>(f, 2, 'number'),
    socketProtocol: one<number>(f, 3, 'number'),
    queryAddress: one<Buffer>(f, 4, 'bytes'),
    queryPort: one<number>(f, 6, 'number'),
    queryTimeSec: one<number>(f, 8, 'number'),
    queryTimeNsec: one<number>(f, 9, 'number'),
    queryMessage: one<Buffer>(f, 10, 'bytes'),
    responseTimeSec: one<number>(f, 12, 'number'),
    responseTimeNsec: one<number>(f, 13, 'number'),
    responseMessage: one<Buffer>(f, 14, 'bytes'),
    policy
  }
}

/** The data frames of a Frame Streams file (as fstrm_capture writes it) and its content type. */
export function readFstrmFile(buf: Buffer): { contentType: string; frames: Buffer[] } {
  let off = 0
  let contentType = ''
  const frames: Buffer[] = []
  while (off + 4 <= buf.length) {
    const len = buf.readUInt32BE(off)
    off += 4
    if (len !== 0) {
      frames.push(buf.subarray(off, off + len))
      off += len
      continue
    }
    const clen = buf.readUInt32BE(off)
    const control = buf.subarray(off + 4, off + 4 + clen)
    off += 4 + clen
    const type = control.readUInt32BE(0)
    if (type === 2 && control.length >= 12) contentType = control.toString('latin1', 12, 12 + control.readUInt32BE(8))
    if (type === 3) break // STOP
  }
  return { contentType, frames }
}

/** A wire-format name as text without the trailing dot. */
export function wireName(buf: Buffer): string {
  const labels: string[] = []
  let off = 0
  while (off < buf.length && buf[off] !== 0) {
    labels.push(buf.toString('latin1', off + 1, off + 1 + buf[off]!))
    off += 1 + buf[off]!
  }
  return labels.join('.')
}
