/*
 * A resolver that answers every query with one RCODE (REFUSED, SERVFAIL, NOTIMP …) and no
 * records: the "not from me" resolver of the failover tests. It echoes the query's header and
 * question with QR and RA set, and counts what it received.
 */
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import type { TestContext } from 'node:test'

export interface RcodeStub {
  readonly port: number
  /** Queries received (health probes included). */
  readonly received: Buffer[]
  /** Queries received other than the forwarder's `. NS` health probe. */
  users(): number
}

/** Starts the stub on 127.0.0.1 (a free port); closed after the test. */
export async function startRcodeStub(t: TestContext, rcode: number): Promise<RcodeStub> {
  const sock = createSocket('udp4')
  const received: Buffer[] = []
  sock.on('message', (msg, rinfo) => {
    if (msg.length < 12) return
    received.push(Buffer.from(msg))
    const out = Buffer.from(msg)
    out[2] = out[2]! | 0x80 // QR
    out[3] = (out[3]! & 0x70) | 0x80 | (rcode & 0x0f) // RA, RCODE
    sock.send(out, rinfo.port, rinfo.address)
  })
  sock.bind(0, '127.0.0.1')
  await once(sock, 'listening')
  t.after(() => sock.close())
  // `. NS` is the root label (a single 0 byte) right after the header, then type 2.
  const isProbe = (q: Buffer): boolean => q[12] === 0 && q.readUInt16BE(13) === 2
  return { port: sock.address().port, received, users: () => received.filter((q) => !isProbe(q)).length }
}
