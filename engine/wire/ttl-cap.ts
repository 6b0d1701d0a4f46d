/**
 * Lowers every TTL of a DNS message to at most `max` seconds, in place (an answer that
 * depends on a scheduled rule must not outlive the rule's next boundary in a cache). Every resource
 * record of the answer, authority and additional sections is capped except OPT, whose TTL field holds
 * EDNS flags. Allocates nothing; a malformed message is left as far as it could be read.
 */
import { HEADER_SIZE, QTYPE_OPT } from './constants.js'

/** Skips a (possibly compressed) name at `p`; -1 when it runs past `end`. */
function skipName(msg: Buffer, p: number, end: number): number {
  while (p < end) {
    const len = msg[p]! // p < end
    if (len === 0) return p + 1
    if ((len & 0xc0) === 0xc0) return p + 2 <= end ? p + 2 : -1
    if ((len & 0xc0) !== 0) return -1
    p += 1 + len
  }
  return -1
}

/** Caps the TTLs of `msg`'s first `length` bytes at `max`; returns how many records it changed. */
export function capTtls(msg: Buffer, length: number, max: number): number {
  const end = Math.min(length, msg.length)
  if (end < HEADER_SIZE) return 0
  const qd = (msg[4]! << 8) | msg[5]! // end >= HEADER_SIZE
  const rr = ((msg[6]! << 8) | msg[7]!) + ((msg[8]! << 8) | msg[9]!) + ((msg[10]! << 8) | msg[11]!)
  let p = HEADER_SIZE
  for (let i = 0; i < qd && p >= 0; i++) {
    p = skipName(msg, p, end)
    if (p >= 0) p += 4
  }
  let changed = 0
  for (let i = 0; i < rr && p >= 0; i++) {
    p = skipName(msg, p, end)
    if (p < 0 || p + 10 > end) break
    const type = (msg[p]! << 8) | msg[p + 1]! // p + 10 <= end
    const ttl = msg.readUInt32BE(p + 4)
    if (type !== QTYPE_OPT && ttl > max) {
      msg.writeUInt32BE(max, p + 4)
      changed++
    }
    p += 10 + ((msg[p + 8]! << 8) | msg[p + 9]!)
  }
  return changed
}
