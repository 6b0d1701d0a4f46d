/**
 * One text form for peer addresses, whichever server accepted the socket: IPv4 as a dotted quad (also when it
 * arrives IPv4-mapped on a dual-stack socket), IPv6 compressed and lower case (RFC 5952 §4). Policy lookups key
 * on this string, so both implementations must agree byte for byte.
 */

/**
 * Formats a 4- or 16-byte address (uWS `getRemoteAddress()`). uWS's own text form is unusable as a key: it
 * prints IPv6 uncompressed (`0000:…:0001`) and IPv4-mapped addresses in hex (`…:ffff:7f00:0001`).
 */
export function formatAddressBytes (b: Uint8Array): string {
  if (b.length === 4) return `${b[0]!}.${b[1]!}.${b[2]!}.${b[3]!}`
  if (b.length !== 16) return ''
  // Length is 16 from here, so every b[i] below is in range.
  let mapped = b[10] === 0xff && b[11] === 0xff
  for (let i = 0; i < 10 && mapped; i++) if (b[i] !== 0) mapped = false
  if (mapped) return `${b[12]!}.${b[13]!}.${b[14]!}.${b[15]!}`
  const groups: number[] = new Array<number>(8)
  for (let i = 0; i < 8; i++) groups[i] = (b[2 * i]! << 8) | b[2 * i + 1]!
  return compressGroups(groups)
}

/**
 * Normalises a textual peer address (`net.Socket#remoteAddress`): strips the IPv4-mapped prefix and folds case.
 * libuv already compresses IPv6 per RFC 5952, so nothing else needs rewriting.
 */
export function normalizeAddress (text: string | undefined): string {
  if (text === undefined) return ''
  const lower = text.toLowerCase()
  if (lower.startsWith('::ffff:') && lower.indexOf('.', 7) !== -1) return lower.slice(7)
  return lower
}

// RFC 5952 §4.2: the longest run of two or more zero groups becomes '::' (the first one on a tie).
function compressGroups (groups: number[]): string {
  let bestStart = -1
  let bestLen = 1
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) { i++; continue }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLen) { bestStart = i; bestLen = j - i }
    i = j
  }
  const hex = (g: number): string => g.toString(16)
  if (bestStart === -1) return groups.map(hex).join(':')
  return groups.slice(0, bestStart).map(hex).join(':') + '::' + groups.slice(bestStart + bestLen).map(hex).join(':')
}
