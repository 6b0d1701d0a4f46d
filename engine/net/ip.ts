/**
 * IP address and prefix helpers shared by the config loader, the store (users' addresses and
 * delegated prefixes), the DNS server's user lookup and the HTTP front door's access rules.
 * Addresses are compared as bytes: an IPv4 address is 4 bytes, an IPv6 address 16, and an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d) is read as the IPv4 address it carries.
 */
import { isIP } from 'node:net'

export interface Cidr {
  readonly family: 4 | 6
  readonly bytes: Uint8Array
  readonly prefix: number
  /** Canonical text: `a.b.c.d/n` or compressed IPv6 `x::/n`; a full-length prefix is written without `/n`. */
  readonly text: string
}

/**
 * Bytes of an address as written: 4 for IPv4 text, 16 for IPv6 text (an IPv4-mapped address stays
 * 16 bytes), or undefined when the text is not an IP address (Node's `isIP` decides).
 */
export function parseIpBytes(text: string): Uint8Array | undefined {
  const family = isIP(text)
  if (family === 4) return Uint8Array.from(text.split('.').map(Number))
  if (family !== 6) return undefined
  const lower = text.toLowerCase()
  // A trailing dotted quad (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) stands for the last two groups.
  const lastColon = lower.lastIndexOf(':')
  const quad =
    lower.indexOf('.', lastColon) > lastColon
      ? lower
          .slice(lastColon + 1)
          .split('.')
          .map(Number)
      : null
  const hex =
    quad === null
      ? lower
      : `${lower.slice(0, lastColon + 1)}${((quad[0]! << 8) | quad[1]!).toString(16)}:${((quad[2]! << 8) | quad[3]!).toString(16)}`
  const [head, tail] = hex.split('::') as [string, string | undefined]
  const headWords = head === '' ? [] : head.split(':').map((w) => parseInt(w, 16))
  const tailWords = tail === undefined || tail === '' ? [] : tail.split(':').map((w) => parseInt(w, 16))
  const words = [...headWords, ...new Array<number>(8 - headWords.length - tailWords.length).fill(0), ...tailWords]
  const out = new Uint8Array(16)
  for (let i = 0; i < 8; i++) {
    out[i * 2] = (words[i]! >> 8) & 0xff
    out[i * 2 + 1] = words[i]! & 0xff
  }
  return out
}

/** True for ::ffff:a.b.c.d (16 bytes): an IPv4 peer seen through a dual-stack socket. */
function isV4Mapped(b: Uint8Array): boolean {
  if (b.length !== 16 || b[10] !== 0xff || b[11] !== 0xff) return false
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false
  return true
}

/**
 * Bytes of an address for matching: like parseIpBytes, but an IPv4-mapped IPv6 address is read as
 * the 4-byte IPv4 address it carries, so a dual-stack socket's peer matches IPv4 rules and users.
 */
export function ipBytes(text: string): Uint8Array | undefined {
  const b = parseIpBytes(text)
  return b !== undefined && isV4Mapped(b) ? b.subarray(12) : b
}

/**
 * Text of a peer address from its bytes (a socket's 4 or 16): an IPv4-mapped address as the
 * dotted quad it carries, anything else as formatIp. '' for any other length.
 */
export function formatPeer(bytes: Uint8Array): string {
  if (bytes.length !== 4 && bytes.length !== 16) return ''
  return formatIp(isV4Mapped(bytes) ? bytes.subarray(12) : bytes)
}

/** Canonical text of address bytes: dotted quad, or RFC 5952 compressed lower-case IPv6. */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`
  const words: number[] = []
  for (let i = 0; i < 16; i += 2) words.push((bytes[i]! << 8) | bytes[i + 1]!)
  // RFC 5952 §4.2: compress the longest run of two or more zero words, the first one on a tie.
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && words[j] === 0) j++
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  const hex = words.map((w) => w.toString(16))
  if (bestStart < 0) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`
}

/** Canonical form of an address, or undefined when the text is not one. */
export function normalizeIp(text: string): string | undefined {
  const bytes = ipBytes(text.trim())
  return bytes === undefined ? undefined : formatIp(bytes)
}

/**
 * Parses `addr` or `addr/prefix`. Host bits below the prefix must be zero (a billing system that
 * sends 10.0.0.5/24 has made a mistake worth reporting, not guessing about). Strict about form, for
 * the same reason: no white space (a trimmed " 1.2.3.4" hides a bug in whatever built it), no
 * zone index (`fe80::1%eth0`: the zone means something on one host only, and would be dropped),
 * and a prefix length in plain decimal (`/032` is refused as `01.2.3.4` is).
 */
export function parseCidr(text: string): Cidr | undefined {
  if (/[\s%]/.test(text)) return undefined
  const slash = text.indexOf('/')
  const addr = slash < 0 ? text : text.slice(0, slash)
  const bytes = ipBytes(addr)
  if (bytes === undefined) return undefined
  const family = bytes.length === 4 ? 4 : 6
  const max = family === 4 ? 32 : 128
  let prefix = max
  if (slash >= 0) {
    const p = text.slice(slash + 1)
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined
    prefix = Number(p)
    // An IPv4-mapped address with an IPv6 prefix length: read the prefix relative to the IPv4 part.
    if (family === 4 && isIP(addr) === 6) prefix -= 96
    if (prefix < 0 || prefix > max) return undefined
  }
  for (let bit = prefix; bit < max; bit++) {
    if ((bytes[bit >> 3]! & (0x80 >> (bit & 7))) !== 0) return undefined
  }
  const base = formatIp(bytes)
  return { family, bytes, prefix, text: prefix === max ? base : `${base}/${prefix}` }
}

/** True when `addr` (bytes) lies inside `cidr`. */
export function cidrContains(cidr: Cidr, addr: Uint8Array): boolean {
  if (addr.length !== cidr.bytes.length) return false
  const full = cidr.prefix >> 3
  for (let i = 0; i < full; i++) if (addr[i] !== cidr.bytes[i]) return false
  const rest = cidr.prefix & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (addr[full]! & mask) === (cidr.bytes[full]! & mask)
}

/** True for 127.0.0.0/8 and ::1 (an IPv4-mapped address counts as the IPv4 address it carries). */
export function isLoopbackAddress(address: string): boolean {
  const b = ipBytes(address)
  if (b === undefined) return false
  if (b.length === 4) return b[0] === 127
  for (let i = 0; i < 15; i++) if (b[i] !== 0) return false
  return b[15] === 1
}
