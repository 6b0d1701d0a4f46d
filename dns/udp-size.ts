/*
 * UDP sizes of forwarded queries (RFC 1035 §4.2.1, RFC 6891 §6.2.3-6.2.5).
 *
 * - What the client allows: an answer over UDP never exceeds the size its OPT advertised (values
 *   below 512 count as 512), or 512 without EDNS. A larger upstream answer is not relayed: the
 *   client gets header and question (and an OPT when it sent one) with TC set, and asks again
 *   over TCP, where the whole answer goes. So the upstream's good behaviour is not what keeps
 *   filterd from being an amplifier or from sending fragmented datagrams.
 * - What filterd advertises upstream: the client's OPT size, lowered to `proxy.upstream-edns-size`
 *   (default 1232, DNS Flag Day 2020) when it is larger, rewritten in the forwarded query. A query
 *   without OPT stays without one.
 *
 * Locally built answers (blocks, errors, safe video) need none of this: they fit 512 bytes
 * (engine/wire ANSWER_BUFFER_SIZE), and safe video's answer already stops at the client's size.
 */
import {
  FLAG_AA,
  FLAG_AD,
  FLAG_TC,
  QUERY_OK,
  QueryScratch,
  CLASSIC_UDP_SIZE,
  readQuery,
  setId,
  writeErrorAnswer
} from '../engine/wire/index.js'
import type { Peer } from './peer.js'

/** The size filterd advertises upstream by default (DNS Flag Day 2020). */
export const DEFAULT_UPSTREAM_EDNS_SIZE = 1232

export class UdpSizes {
  private readonly q = new QueryScratch()
  private readonly upstreamSize: number

  constructor(upstreamSize = DEFAULT_UPSTREAM_EDNS_SIZE) {
    this.upstreamSize = Math.max(CLASSIC_UDP_SIZE, upstreamSize)
  }

  /**
   * Before `msg` is forwarded: notes on a UDP `peer` the largest answer it takes, and caps the
   * OPT's UDP size in `msg` (the buffer that goes upstream) at the configured size.
   */
  prepare(msg: Buffer, peer: Peer): void {
    const q = this.q
    if (readQuery(msg, q) !== QUERY_OK || !q.hasEdns) {
      peer.udpLimit = CLASSIC_UDP_SIZE
      return
    }
    const asked = q.udpPayloadSize
    peer.udpLimit = Math.max(CLASSIC_UDP_SIZE, asked)
    if (asked > this.upstreamSize) {
      msg[q.optOffset + 3] = this.upstreamSize >>> 8 // OPT CLASS: the requestor's UDP payload size
      msg[q.optOffset + 4] = this.upstreamSize & 0xff
    }
  }

  /**
   * Writes into `out` (ANSWER_BUFFER_SIZE bytes) the truncated form of an answer too large for the
   * client: the client's ID, the answer's RCODE and AA/AD bits, TC, the question of `query` (the
   * query as forwarded), and an OPT with our size when the query had one. Returns its length.
   */
  truncate(query: Buffer, clientId: number, response: Buffer, out: Buffer): number {
    const q = this.q
    setId(query, clientId)
    const ok = readQuery(query, q) === QUERY_OK
    const len = writeErrorAnswer(query, ok ? q : null, response[3]! & 0x0f, out) // response is an answer: >= 12 bytes
    out[2] = out[2]! | (FLAG_TC >>> 8) | (response[2]! & (FLAG_AA >>> 8))
    out[3] = out[3]! | (response[3]! & FLAG_AD)
    return len
  }
}
