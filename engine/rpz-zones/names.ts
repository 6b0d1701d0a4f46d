/**
 * Domain names on the wire for zone transfers: written as presentation text (lower-case, no
 * trailing dot, '' = the root) and read back with compression pointers followed (RFC 1035 4.1.4).
 * The DNS server's hot path has its own byte-level readers (engine/wire); these serve the slower
 * transfer paths, where names are handled one record at a time.
 */
import { EngineError } from '../errors.js'

const MAX_NAME = 255
const MAX_LABEL = 63
const MAX_POINTERS = 128

/** Thrown for a message that is not well-formed; the transfer code turns it into FORMERR or a failed transfer. */
export class WireFormatError extends EngineError {
  constructor(message: string, options?: ErrorOptions) {
    super('ENGINE_RPZ_WIRE_FORMAT', message, options)
    this.name = 'WireFormatError'
  }
}

/** `name` (presentation, no trailing dot) as uncompressed wire bytes. `\.` escapes are not supported. */
export function encodeName(name: string): Buffer {
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name
  if (trimmed === '') return Buffer.from([0])
  const labels = trimmed.split('.')
  const parts: Buffer[] = []
  for (const label of labels) {
    const bytes = Buffer.from(label, 'latin1')
    if (bytes.length === 0 || bytes.length > MAX_LABEL) throw new WireFormatError(`bad label in ${name}`)
    parts.push(Buffer.from([bytes.length]), bytes)
  }
  parts.push(Buffer.from([0]))
  const out = Buffer.concat(parts)
  if (out.length > MAX_NAME) throw new WireFormatError(`name too long: ${name}`)
  return out
}

/** The name at `offset` in `msg` (lower-cased) and the offset just past it where it is written. */
export function decodeName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  let pos = offset
  let end = -1
  let jumps = 0
  let length = 0
  for (;;) {
    if (pos >= msg.length) throw new WireFormatError('name runs past the message')
    const len = msg[pos]!
    if (len === 0) {
      if (end < 0) end = pos + 1
      break
    }
    if ((len & 0xc0) === 0xc0) {
      if (pos + 1 >= msg.length) throw new WireFormatError('truncated pointer')
      if (++jumps > MAX_POINTERS) throw new WireFormatError('pointer loop')
      if (end < 0) end = pos + 2
      pos = ((len & 0x3f) << 8) | msg[pos + 1]!
      continue
    }
    if ((len & 0xc0) !== 0) throw new WireFormatError('unknown label type')
    if (pos + 1 + len > msg.length) throw new WireFormatError('label runs past the message')
    length += len + 1
    if (length > MAX_NAME) throw new WireFormatError('name too long')
    labels.push(msg.toString('latin1', pos + 1, pos + 1 + len).toLowerCase())
    pos += 1 + len
  }
  return { name: labels.join('.'), end }
}
