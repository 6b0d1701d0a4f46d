// Test helpers for engine/wire (not a test file: node --test only runs *.test.js).
import dnsPacket from 'dns-packet'

export interface QueryOptions {
  id?: number
  flags?: number
  /** OPT RR to add; omitted = no EDNS. */
  edns?: { udpPayloadSize?: number; dnssecOk?: boolean; options?: dnsPacket.PacketOpt[] }
}

/** A query encoded by dns-packet. */
export function query(name: string, type: dnsPacket.RecordType, opts: QueryOptions = {}): Buffer {
  const packet: dnsPacket.Packet = {
    type: 'query',
    id: opts.id ?? 0x1234,
    flags: opts.flags ?? dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name, class: 'IN' }]
  }
  if (opts.edns !== undefined) {
    packet.additionals = [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: opts.edns.udpPayloadSize ?? 4096,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: opts.edns.dnssecOk === true ? dnsPacket.DNSSEC_OK : 0,
        flag_do: opts.edns.dnssecOk === true,
        options: opts.edns.options ?? []
      }
    ]
  }
  return dnsPacket.encode(packet)
}

/** A query whose name is given as raw labels (so a label may hold '.', or any byte). */
export function rawQuery(
  labels: Array<string | Buffer>,
  qtype = 1,
  opts: { id?: number; flags?: number; qclass?: number; tail?: Buffer } = {}
): Buffer {
  const parts: Buffer[] = []
  const header = Buffer.alloc(12)
  header.writeUInt16BE(opts.id ?? 0xbeef, 0)
  header.writeUInt16BE(opts.flags ?? 0x0100, 2)
  header.writeUInt16BE(1, 4)
  if (opts.tail !== undefined) header.writeUInt16BE(1, 10)
  parts.push(header)
  for (const l of labels) {
    const b = typeof l === 'string' ? Buffer.from(l, 'latin1') : l
    parts.push(Buffer.from([b.length]), b)
  }
  const tail = Buffer.alloc(5)
  tail.writeUInt16BE(qtype, 1)
  tail.writeUInt16BE(opts.qclass ?? 1, 3)
  parts.push(tail)
  if (opts.tail !== undefined) parts.push(opts.tail)
  return Buffer.concat(parts)
}

/** A raw OPT RR with the given options ([code, data] pairs). */
export function rawOpt(options: Array<[number, Buffer]>, { udp = 1232, version = 0, flags = 0 } = {}): Buffer {
  const body = Buffer.concat(
    options.map(([code, data]) => {
      const h = Buffer.alloc(4)
      h.writeUInt16BE(code, 0)
      h.writeUInt16BE(data.length, 2)
      return Buffer.concat([h, data])
    })
  )
  const rr = Buffer.alloc(11)
  rr.writeUInt16BE(41, 1)
  rr.writeUInt16BE(udp, 3)
  rr[6] = version
  rr.writeUInt16BE(flags, 7)
  rr.writeUInt16BE(body.length, 9)
  return Buffer.concat([rr, body])
}

/** The same bytes seen through a Buffer that starts at a non-zero offset of a larger allocation. */
export function atOffset(msg: Buffer, offset = 37): Buffer {
  const big = Buffer.alloc(offset + msg.length + 19, 0xaa)
  msg.copy(big, offset)
  return big.subarray(offset, offset + msg.length)
}

/** A fresh output buffer viewed at a non-zero offset, pre-filled with junk so stale bytes show. */
export function outAtOffset(size = 1232, offset = 11): Buffer {
  return Buffer.alloc(offset + size, 0xee).subarray(offset)
}

/** dns-packet's decoded OPT record, or undefined. */
export function optOf(p: dnsPacket.DecodedPacket): dnsPacket.OptAnswer | undefined {
  return (p.additionals ?? []).find((a): a is dnsPacket.OptAnswer => a.type === 'OPT')
}

/** dns-packet's decode result with the header fields its typings leave out. */
export type Decoded = dnsPacket.DecodedPacket & { opcode: string; rcode: string }

export function decode(bytes: Buffer): Decoded {
  return dnsPacket.decode(bytes) as Decoded
}
