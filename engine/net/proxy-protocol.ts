/**
 * The PROXY protocol version 2 header (HAProxy's spec, section 2.2) that an L4 proxy or load balancer
 * writes before the client's bytes, naming the client's address. Read only from a trusted proxy
 * (the caller decides): anyone else could name any address.
 */
import { formatPeer, parseIpBytes } from './ip.js'

/** The 12-byte signature every v2 header begins with. */
export const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a])
/** A header is at most 16 bytes plus what its length field says (216 for addresses and TLVs we allow). */
export const PROXY_V2_MAX = 16 + 216

export type ProxyHeader =
  /** More bytes are needed to decide. */
  | { readonly kind: 'partial' }
  /** Not a v2 header (no signature), or a malformed one. */
  | { readonly kind: 'none' }
  | { readonly kind: 'invalid'; readonly why: string }
  /** A header of `length` bytes; `address` is null for LOCAL (the proxy's own health check) and for UNSPEC/UNIX. */
  | { readonly kind: 'header'; readonly length: number; readonly address: string | null; readonly port: number }

/** Reads a v2 header at the start of `buf`. */
export function readProxyHeader(buf: Buffer): ProxyHeader {
  const head = Math.min(buf.length, PROXY_V2_SIGNATURE.length)
  if (!buf.subarray(0, head).equals(PROXY_V2_SIGNATURE.subarray(0, head))) return { kind: 'none' }
  if (buf.length < 16) return { kind: 'partial' }
  const verCmd = buf[12]!
  const fam = buf[13]!
  const length = 16 + buf.readUInt16BE(14)
  if (verCmd >> 4 !== 2) return { kind: 'invalid', why: 'not version 2' }
  if (length > PROXY_V2_MAX) return { kind: 'invalid', why: 'header too long' }
  if (buf.length < length) return { kind: 'partial' }
  const cmd = verCmd & 0x0f
  if (cmd === 0) return { kind: 'header', length, address: null, port: 0 } // LOCAL
  if (cmd !== 1) return { kind: 'invalid', why: 'unknown command' }
  const family = fam >> 4
  if (family === 1 && length >= 16 + 12)
    return { kind: 'header', length, address: formatPeer(buf.subarray(16, 20)), port: buf.readUInt16BE(24) }
  if (family === 2 && length >= 16 + 36)
    return { kind: 'header', length, address: formatPeer(buf.subarray(16, 32)), port: buf.readUInt16BE(48) }
  return { kind: 'header', length, address: null, port: 0 }
}

/** A v2 PROXY header for a TCP connection from `address:port` (tests and benchmarks write it). */
export function proxyHeaderFor(address: string, port: number, dest = '127.0.0.1', destPort = 0): Buffer {
  const from = parseIpBytes(address)!
  const v6 = from.length === 16
  const to = parseIpBytes(v6 && !dest.includes(':') ? '::1' : dest)!
  const body = Buffer.alloc(v6 ? 36 : 12)
  body.set(from, 0)
  body.set(to, from.length)
  body.writeUInt16BE(port, 2 * from.length)
  body.writeUInt16BE(destPort, 2 * from.length + 2)
  const head = Buffer.from([...PROXY_V2_SIGNATURE, 0x21, v6 ? 0x21 : 0x11, 0, body.length])
  return Buffer.concat([head, body])
}
