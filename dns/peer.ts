/*
 * The one peer type of the DNS fronts: who asked a query and how its answer goes back. A UDP
 * peer is a client address and port on one listening socket; a TCP peer is one connection (one
 * Peer object per connection, shared by all its queries). The dispatcher, the forwarder and safe
 * video carry a Peer and never look inside the channel.
 */

/** How answers reach a peer: a UDP listening socket or a TCP connection. */
export interface PeerChannel {
  /** TCP (answers are framed, and an answered query frees its in-flight slot). */
  readonly isStream: boolean
  /**
   * Sends `len` bytes of `buf` to `peer`. `copy`: `buf` is scratch reused by the next query, so
   * a transport that may queue it must copy it first.
   */
  send (peer: Peer, buf: Buffer, len: number, copy: boolean): void
  /** The query from `peer` gets no answer (dropped, or the answer could not be built). */
  skip (peer: Peer): void
}

export class Peer {
  readonly channel: PeerChannel
  /** The client's address (as the kernel reported it; the policy may use ECS instead). */
  readonly address: string
  readonly port: number
  constructor (channel: PeerChannel, address: string, port: number) {
    this.channel = channel
    this.address = address
    this.port = port
  }
}
