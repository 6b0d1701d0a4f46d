/**
 * The smallest TTL of a DNS answer's records, for the `Cache-Control: max-age` of a DoH answer
 * (RFC 8484 §5.1: the freshness lifetime must not outlive the smallest TTL of the answer's records).
 */

// The offset after the name at `i` (labels, then a zero or a compression pointer), or -1.
function skipName(msg: Buffer, i: number, end: number): number {
  while (i < end) {
    const len = msg[i]! // i < end
    if (len === 0) return i + 1
    if ((len & 0xc0) === 0xc0) return i + 2 <= end ? i + 2 : -1
    if (len > 63) return -1
    i += len + 1
  }
  return -1
}

/**
 * The smallest TTL of the answer and authority records of the first `len` bytes of `msg` (OPT
 * records left out), or -1 when there is none or the message is malformed.
 */
export function smallestTtl(msg: Buffer, len = msg.length): number {
  if (len < 12) return -1
  const qd = msg.readUInt16BE(4)
  const records = msg.readUInt16BE(6) + msg.readUInt16BE(8)
  let i = 12
  for (let q = 0; q < qd; q++) {
    i = skipName(msg, i, len)
    if (i < 0 || i + 4 > len) return -1
    i += 4
  }
  let min = -1
  for (let r = 0; r < records; r++) {
    i = skipName(msg, i, len)
    if (i < 0 || i + 10 > len) return -1
    const type = msg.readUInt16BE(i)
    const ttl = msg.readUInt32BE(i + 4)
    const rdlength = msg.readUInt16BE(i + 8)
    i += 10 + rdlength
    if (i > len) return -1
    if (type !== 41 && (min < 0 || ttl < min)) min = ttl
  }
  return min
}
