/**
 * Which address an HTTP request comes from, by one rule for every listener that can be reached through a
 * proxy: the management API's front door (blockpage/front-door.ts, trusting `api.trusted-proxies`) and the
 * api role itself (api/auth.ts, trusting its loopback peers, where the front door relays from).
 *
 * The rule (the one `proxy-addr` implements for Express): the socket peer is the client unless the peer is
 * trusted. From a trusted peer, the relayed-client header the caller names (the front door's
 * `X-Filterd-Client`) is believed when present; otherwise `X-Forwarded-For` is read from the right,
 * skipping trusted proxies, and the first address that is not one is the client. Entries left of it were
 * written by the client itself and prove nothing; when every entry is a trusted proxy, the leftmost is
 * the client. An entry that is not an address ends the walk and is returned as written: no address rule
 * allows it and it is not loopback, so garbage gains nothing.
 */
import { cidrContains, ipBytes, normalizeIp, parseCidr, type Cidr } from './ip.js'

/** A set of addresses and prefixes (trusted proxies). */
export interface AddressSet {
  has(address: string): boolean
}

/** Every loopback address: 127.0.0.0/8 and ::1 (an IPv4-mapped one counts as its IPv4 address). */
export const LOOPBACK: AddressSet = compileAddressSet(['127.0.0.0/8', '::1'])

/**
 * Compiles addresses and CIDR prefixes (`api.trusted-proxies`); throws a message naming the bad entry by
 * its index, which the config loader puts after the key.
 */
export function compileAddressSet(entries: readonly string[]): AddressSet {
  const cidrs: Cidr[] = entries.map((text, i) => {
    const cidr = parseCidr(text)
    if (cidr === undefined) throw new Error(`[${i}]: "${text}" is not an address or prefix`)
    return cidr
  })
  return {
    has(address: string): boolean {
      if (cidrs.length === 0) return false
      const bytes = ipBytes(address)
      return bytes !== undefined && cidrs.some((c) => cidrContains(c, bytes))
    }
  }
}

/** What the rule reads of a request (engine/http's HttpRequest has it). */
export interface AddressedRequest {
  readonly remoteAddress: string
  header(name: string): string | undefined
}

export interface ClientAddressRule {
  /** Peers (and X-Forwarded-For hops) whose word about the client is believed. */
  readonly trusted: AddressSet
  /** A header a trusted peer writes with the client address alone, read before X-Forwarded-For (lower case). */
  readonly relayHeader?: string
}

/** The client address of `req` under `rule` (see the module comment); canonical text when it is an address. */
export function clientAddress(req: AddressedRequest, rule: ClientAddressRule): string {
  const peer = req.remoteAddress
  if (!rule.trusted.has(peer)) return peer
  if (rule.relayHeader !== undefined) {
    const relayed = req.header(rule.relayHeader)
    if (relayed !== undefined) {
      const text = relayed.trim()
      return normalizeIp(text) ?? text
    }
  }
  const xff = req.header('x-forwarded-for')
  return xff === undefined ? peer : walkForwardedFor(xff, peer, rule.trusted)
}

/** X-Forwarded-For from the right: the first hop that is not trusted (see the module comment). */
function walkForwardedFor(xff: string, peer: string, trusted: AddressSet): string {
  const hops = xff.split(',')
  let client = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const text = hops[i]!.trim()
    const address = normalizeIp(text)
    if (address === undefined) return text
    client = address
    if (!trusted.has(address)) return address
  }
  return client
}
