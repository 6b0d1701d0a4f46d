/**
 * One text form for peer addresses, whichever server accepted the socket: IPv4 as a dotted quad (also when it
 * arrives IPv4-mapped on a dual-stack socket), IPv6 compressed and lower case (RFC 5952 §4). Policy lookups key
 * on this string, so both implementations must agree byte for byte.
 */
import { formatPeer } from '../net/index.js'

/**
 * Formats a 4- or 16-byte address (uWS `getRemoteAddress()`). uWS's own text form is unusable as a key: it
 * prints IPv6 uncompressed (`0000:…:0001`) and IPv4-mapped addresses in hex (`…:ffff:7f00:0001`).
 */
export function formatAddressBytes(b: Uint8Array): string {
  return formatPeer(b)
}

/**
 * Normalises a textual peer address (`net.Socket#remoteAddress`): strips the IPv4-mapped prefix and folds case.
 * libuv already compresses IPv6 per RFC 5952, so nothing else needs rewriting.
 */
export function normalizeAddress(text: string | undefined): string {
  if (text === undefined) return ''
  const lower = text.toLowerCase()
  if (lower.startsWith('::ffff:') && lower.indexOf('.', 7) !== -1) return lower.slice(7)
  return lower
}
