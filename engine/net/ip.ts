/**
 * IP address and prefix helpers shared by the config loader, the store (users' addresses and
 * delegated prefixes), the DNS server's user lookup and the HTTP front door's access rules.
 * Addresses are compared as bytes: an IPv4 address is 4 bytes, an IPv6 address 16, and an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d) is read as the IPv4 address it carries.
 */
import { isIP, isIPv4 } from 'node:net'

export interface Cidr {
  readonly family: 4 | 6
  readonly bytes: Uint8Array
  readonly prefix: number
  /** Canonical text: `a.b.c.d/n` or compressed IPv6 `x::/n`; a full-length prefix is written without `/n`. */
  readonly text: string
}

/** Bytes of an address, or undefined when the text is not an IP address. */
export function ipBytes (text: string): Uint8Array | undefined {
  const family = isIP(text)
  if (family === 4) return Uint8Array.from(text.split('.').map(Number))
  if (family !== 6) return undefined
  const lower = text.toLowerCase()
  const mapped = /^(?:0{0,4}:){0,5}(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped !== null && lower.startsWith('::ffff:') && isIPv4(mapped[1]!)) return ipBytes(mapped[1]!)
  const out = new Uint8Array(16)
  let [head, tail] = lower.split('::') as [string, string | undefined]
  let tailWords: string[] = []
  if (tail !== undefined) tailWords = tail === '' ? [] : tail.split(':')
  const headWords = head === '' ? [] : head.split(':')
  const words: number[] = []
  const expand = (ws: string[]): number[] => {
    const r: number[] = []
    for (const w of ws) {
      if (w.includes('.')) {
        const b = w.split('.').map(Number)
        r.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!)
      } else r.push(parseInt(w, 16))
    }
    return r
  }
  const h = expand(headWords)
  const t = expand(tailWords)
  words.push(...h)
  for (let i = h.length + t.length; i < 8; i++) words.push(0)
  words.push(...t)
  for (let i = 0; i < 8; i++) {
    out[i * 2] = (words[i]! >> 8) & 0xff
    out[i * 2 + 1] = words[i]! & 0xff
  }
  return out
}

/** Canonical text of address bytes: dotted quad, or RFC 5952 compressed lower-case IPv6. */
export function formatIp (bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`
  const words: number[] = []
  for (let i = 0; i < 16; i += 2) words.push((bytes[i]! << 8) | bytes[i + 1]!)
  // RFC 5952 §4.2: compress the longest run of two or more zero words, the first one on a tie.
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) { i++; continue }
    let j = i
    while (j < 8 && words[j] === 0) j++
    if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i }
    i = j
  }
  const hex = words.map((w) => w.toString(16))
  if (bestStart < 0) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`
}

/** Canonical form of an address, or undefined when the text is not one. */
export function normalizeIp (text: string): string | undefined {
  const bytes = ipBytes(text.trim())
  return bytes === undefined ? undefined : formatIp(bytes)
}

/**
 * Parses `addr` or `addr/prefix`. Host bits below the prefix must be zero (a billing system that
 * sends 10.0.0.5/24 has made a mistake worth reporting, not guessing about).
 */
export function parseCidr (text: string): Cidr | undefined {
  const slash = text.indexOf('/')
  const addr = slash < 0 ? text.trim() : text.slice(0, slash).trim()
  const bytes = ipBytes(addr)
  if (bytes === undefined) return undefined
  const family = bytes.length === 4 ? 4 : 6
  const max = family === 4 ? 32 : 128
  let prefix = max
  if (slash >= 0) {
    const p = text.slice(slash + 1).trim()
    if (!/^\d{1,3}$/.test(p)) return undefined
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
export function cidrContains (cidr: Cidr, addr: Uint8Array): boolean {
  if (addr.length !== cidr.bytes.length) return false
  const full = cidr.prefix >> 3
  for (let i = 0; i < full; i++) if (addr[i] !== cidr.bytes[i]) return false
  const rest = cidr.prefix & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (addr[full]! & mask) === (cidr.bytes[full]! & mask)
}
