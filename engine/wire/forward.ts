// Helpers for forwarding a query upstream and checking what comes back.
// None of them allocate; all tolerate short or malformed input.
import { FLAG_QR, FLAG_TC, HEADER_SIZE, RCODE_MASK } from './constants.js'
import type { QueryScratch } from './query.js'

/** Message ID, or -1 when `msg` is shorter than 2 bytes. */
export function readId(msg: Buffer): number {
  if (msg.length < 2) return -1
  return (msg[0]! << 8) | msg[1]! // length checked above
}

/** Overwrites the message ID in place (for upstream ID rewriting). */
export function setId(msg: Buffer, id: number): void {
  if (msg.length < 2) return
  msg[0] = (id >>> 8) & 0xff
  msg[1] = id & 0xff
}

/** The header has QR set (the message is a response). */
export function isResponse(msg: Buffer): boolean {
  return msg.length >= HEADER_SIZE && (msg[2]! & (FLAG_QR >>> 8)) !== 0 // length checked
}

/** The TC bit: the answer was truncated, retry over TCP (RFC 7766 §5). */
export function isTruncated(msg: Buffer): boolean {
  return msg.length >= HEADER_SIZE && (msg[2]! & (FLAG_TC >>> 8)) !== 0 // length checked
}

/** The header's 4-bit RCODE (without an OPT's extended bits), or -1 for a message shorter than a header. */
export function rcodeOf(msg: Buffer): number {
  if (msg.length < HEADER_SIZE) return -1
  return msg[3]! & RCODE_MASK // length checked above
}

/**
 * The response's single question equals the query's (RFC 5452 §9.1): same
 * name compared ASCII case-insensitively, same QTYPE and QCLASS. A
 * compressed or malformed question never matches. Allocates nothing.
 */
export function questionMatches(response: Buffer, q: QueryScratch): boolean {
  const end = response.length
  if (end < HEADER_SIZE || q.questionEnd === 0) return false
  // end >= HEADER_SIZE checked above.
  if (response[4]! !== 0 || response[5]! !== 1) return false
  const bytes = q.nameBytes
  let i = HEADER_SIZE
  for (let k = 0; k < q.labelCount; k++) {
    // k < labelCount, so labelStarts[k] (and [k+1] when present) were written by readQuery.
    const start = q.labelStarts[k]!
    const stop = k + 1 < q.labelCount ? q.labelStarts[k + 1]! - 1 : q.nameLength
    const len = stop - start
    if (i >= end || response[i]! !== len || i + 1 + len > end) return false
    for (let j = 0; j < len; j++) {
      let c = response[i + 1 + j]! // i + 1 + len <= end checked above
      if (c >= 0x41 && c <= 0x5a) c |= 0x20
      if (c !== bytes[start + j]!) return false // start + j < nameLength
    }
    i += 1 + len
  }
  if (i + 5 > end || response[i]! !== 0) return false
  // i + 5 <= end checked above.
  return (
    ((response[i + 1]! << 8) | response[i + 2]!) === q.qtype &&
    ((response[i + 3]! << 8) | response[i + 4]!) === q.qclass
  )
}
