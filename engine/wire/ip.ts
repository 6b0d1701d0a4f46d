// IP address text <-> bytes for the wire layer (slow paths: config, ECS strings for logs,
// safe-video answers), on top of the project's one IP implementation (engine/net/ip.ts).
import { formatIp, parseIpBytes } from '../net/index.js'

/** Dotted quad of buf[off..off+3]. Caller guarantees 4 readable bytes. */
export function formatIPv4(buf: Buffer, off: number): string {
  return formatIp(buf.subarray(off, off + 4))
}

/** RFC 5952 text of buf[off..off+15]: lower case, longest zero run (≥ 2 groups) as '::'. */
export function formatIPv6(buf: Buffer, off: number): string {
  return formatIp(buf.subarray(off, off + 16))
}

/** Writes the 4 bytes of a dotted-quad IPv4 address at `off`; false (nothing written) if not one. */
export function parseIPv4Into(s: string, out: Buffer, off: number): boolean {
  const b = parseIpBytes(s)
  if (b === undefined || b.length !== 4) return false
  out.set(b, off)
  return true
}

/** Writes the 16 bytes of an IPv6 address (with '::' and a trailing dotted quad allowed) at `off`. */
export function parseIPv6Into(s: string, out: Buffer, off: number): boolean {
  const b = parseIpBytes(s)
  if (b === undefined || b.length !== 16) return false
  out.set(b, off)
  return true
}
