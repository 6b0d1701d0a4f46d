/*
 * The one peer type of the DNS fronts: who asked a query and how its answer goes back. A UDP
 * peer is a client address and port on one listening socket; a TCP peer is one connection (one
 * Peer object per connection, shared by all its queries). The dispatcher, the forwarder and safe
 * video carry a Peer and never look inside the channel.
 */
import type { PendingQuery } from './upstream/pending.js'

/** How answers reach a peer: a UDP listening socket or a TCP connection. */
export interface PeerChannel {
  /** TCP (answers are framed, and an answered query frees its in-flight slot). */
  readonly isStream: boolean
  /**
   * Sends `len` bytes of `buf` to `peer`. `copy`: `buf` is scratch reused by the next query, so
   * a transport that may queue it must copy it first.
   */
  send(peer: Peer, buf: Buffer, len: number, copy: boolean): void
  /** The query from `peer` gets no answer (dropped, or the answer could not be built). */
  skip(peer: Peer): void
  /**
   * `msg` (a query this channel delivered) as a Buffer that stays valid after the handler returns:
   * itself, or a copy when it lives in a receive area the next batch overwrites.
   */
  own(msg: Buffer): Buffer
  /**
   * The query from `peer` is about to be forwarded upstream as `p`. A channel whose client may go
   * away before the answer (a DoH stream the client resets) keeps `p` and hands it to `withdraw`
   * then, so that it leaves the pending table at once rather than at the upstream timeout. False:
   * the client is gone already, and the query is not forwarded at all.
   */
  forwarding?(p: PendingQuery, withdraw: Withdraw): boolean
}

/** Takes a forwarded query whose client went away out of the forwarder (dns/dispatch.ts). */
export type Withdraw = (p: PendingQuery) => void

export class Peer {
  readonly channel: PeerChannel
  /** The client's address (as the kernel reported it; the policy may use ECS instead). */
  readonly address: string
  readonly port: number
  /** The IPv4 address as an unsigned 32-bit number when the channel has it (native I/O), else -1. */
  readonly ip4: number
  /**
   * The largest answer this peer takes over UDP (its EDNS size, 512 without EDNS), noted when its
   * query is forwarded (./udp-size.ts). A UDP Peer is one query's; a TCP Peer ignores it.
   */
  udpLimit = 512
  /** The subscriber's client ID from the DoH path or the DoT server name, else null. */
  readonly clientId: string | null
  constructor(channel: PeerChannel, address: string, port: number, ip4 = -1, clientId: string | null = null) {
    this.channel = channel
    this.address = address
    this.port = port
    this.ip4 = ip4
    this.clientId = clientId
  }
}
