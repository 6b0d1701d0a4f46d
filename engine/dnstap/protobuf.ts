/*
 * The few protobuf wire-format primitives the dnstap encoder needs (varints, tags, fixed32),
 * written straight into a caller's Buffer. dnstap is a tiny schema, so a generated codec would
 * buy nothing but allocations: every size is computed first (a nested message needs its length
 * before its bytes), then everything is written in one pass with no intermediate object.
 */

/** Wire types (protobuf encoding spec). */
export const WIRE_VARINT = 0
export const WIRE_FIXED32 = 5
export const WIRE_LEN = 2

/** Bytes of the varint of `n` (0 <= n < 2^53: a JavaScript number's exact integers). */
export function varintSize(n: number): number {
  if (n < 0x80) return 1
  if (n < 0x4000) return 2
  if (n < 0x200000) return 3
  if (n < 0x10000000) return 4
  let size = 4
  n = Math.floor(n / 0x10000000)
  while (n > 0) {
    size++
    n = Math.floor(n / 0x80)
  }
  return size
}

/** Writes the varint of `n` (0 <= n < 2^53) at `off`; returns the offset after it. */
export function writeVarint(buf: Buffer, off: number, n: number): number {
  // 32-bit arithmetic while it fits (every length and enum), division above.
  while (n >= 0x80000000) {
    buf[off++] = (n % 0x80) | 0x80
    n = Math.floor(n / 0x80)
  }
  while (n >= 0x80) {
    buf[off++] = (n & 0x7f) | 0x80
    n >>>= 7
  }
  buf[off++] = n
  return off
}

/** The key of field `field` with wire type `wire`. */
export function tag(field: number, wire: number): number {
  return (field << 3) | wire
}

/** Size of a length-delimited field of `len` bytes (tag of a field < 16, length, bytes). */
export function lenFieldSize(len: number): number {
  return 1 + varintSize(len) + len
}

/** Size of a varint field (field < 16). */
export function varintFieldSize(n: number): number {
  return 1 + varintSize(n)
}

/** Writes the tag and length of a length-delimited field (field < 16); returns where its bytes go. */
export function writeLenHeader(buf: Buffer, off: number, field: number, len: number): number {
  buf[off++] = tag(field, WIRE_LEN)
  return writeVarint(buf, off, len)
}

/** Writes a varint field (field < 16). */
export function writeVarintField(buf: Buffer, off: number, field: number, n: number): number {
  buf[off++] = tag(field, WIRE_VARINT)
  return writeVarint(buf, off, n)
}

/** Writes a fixed32 field (field < 16): 5 bytes. */
export function writeFixed32Field(buf: Buffer, off: number, field: number, n: number): number {
  buf[off++] = tag(field, WIRE_FIXED32)
  buf.writeUInt32LE(n >>> 0, off)
  return off + 4
}
