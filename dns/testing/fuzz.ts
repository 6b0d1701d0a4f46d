/**
 * The DNS fuzz packet generator (not a test file): hostile and broken messages of every shape the
 * campaign used, from a seeded PRNG so a failing run can be replayed with its seed.
 *
 * Kinds, by weight: random bytes (any length, headers included or not); mutated valid queries
 * (bytes flipped, cut, extended); compression pointers (to themselves, in loops, past the end);
 * label and name limits (63/64-byte labels, 253–256-byte names, 127 one-byte labels, a label length
 * running past the end); EDNS and ECS garbage (bad OPT lengths, several OPTs, OPT with a name,
 * option lengths past the end, ECS family 3, prefixes too long, address bytes beyond the prefix,
 * version 1); bad header counts and flags (QR, opcodes, counts of 0, 2, 65535).
 */

/** xorshift32: fast, seeded, good enough to pick bytes and shapes. */
export class Rng {
  private s: number
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9
  }
  next(): number {
    let x = this.s
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    this.s = x
    return x
  }
  /** 0 ≤ n < max */
  int(max: number): number {
    return this.next() % max
  }
  fill(b: Buffer, from = 0, to = b.length): void {
    for (let i = from; i < to; i++) b[i] = this.next() & 0xff
  }
}

function header(id: number, flags: number, qd: number, an: number, ns: number, ar: number): Buffer {
  const h = Buffer.alloc(12)
  h.writeUInt16BE(id, 0)
  h.writeUInt16BE(flags, 2)
  h.writeUInt16BE(qd, 4)
  h.writeUInt16BE(an, 6)
  h.writeUInt16BE(ns, 8)
  h.writeUInt16BE(ar, 10)
  return h
}

export function encodeName(name: string): Buffer {
  const parts: Buffer[] = []
  for (const l of name.split('.')) if (l !== '') parts.push(Buffer.from([l.length]), Buffer.from(l, 'latin1'))
  parts.push(Buffer.from([0]))
  return Buffer.concat(parts)
}

function question(name: Buffer, qtype: number, qclass = 1): Buffer {
  const t = Buffer.alloc(4)
  t.writeUInt16BE(qtype, 0)
  t.writeUInt16BE(qclass, 2)
  return Buffer.concat([name, t])
}

function opt(
  payload: number,
  version: number,
  options: Buffer,
  rdlenDelta = 0,
  name: Buffer = Buffer.from([0])
): Buffer {
  const f = Buffer.alloc(10)
  f.writeUInt16BE(41, 0)
  f.writeUInt16BE(payload, 2)
  f[5] = version
  f.writeUInt16BE(Math.max(0, Math.min(0xffff, options.length + rdlenDelta)), 8)
  return Buffer.concat([name, f, options])
}

function ecs(family: number, source: number, scope: number, addr: Buffer, lenDelta = 0): Buffer {
  const o = Buffer.alloc(8)
  o.writeUInt16BE(8, 0)
  o.writeUInt16BE(Math.max(0, 4 + addr.length + lenDelta), 2)
  o.writeUInt16BE(family, 4)
  o[6] = source
  o[7] = scope
  return Buffer.concat([o, addr])
}

/** A well-formed query (RD set), optionally with EDNS. */
export function validQuery(id: number, name: string, qtype = 1, edns = false): Buffer {
  const parts = [header(id, 0x0100, 1, 0, 0, edns ? 1 : 0), question(encodeName(name), qtype)]
  if (edns) parts.push(opt(1232, 0, Buffer.alloc(0)))
  return Buffer.concat(parts)
}

const QTYPES = [1, 28, 65, 64, 15, 16, 255, 6, 2, 12, 33, 0, 0xffff]

export class FuzzGenerator {
  readonly rng: Rng
  private readonly templates: Buffer[]
  /** Packets made, by kind. */
  readonly made = new Array<number>(7).fill(0)

  constructor(seed: number, names: readonly string[]) {
    this.rng = new Rng(seed)
    this.templates = []
    for (const n of names) {
      for (const t of [1, 28, 65, 255]) {
        this.templates.push(validQuery(0x1234, n, t, false))
        this.templates.push(validQuery(0x1234, n, t, true))
      }
      const withEcs = Buffer.concat([
        header(7, 0x0100, 1, 0, 0, 1),
        question(encodeName(n), 1),
        opt(4096, 0, ecs(1, 24, 0, Buffer.from([10, 1, 2])))
      ])
      this.templates.push(withEcs)
    }
  }

  private name(): Buffer {
    const r = this.rng
    const t = this.templates[r.int(this.templates.length)]!
    let end = 12
    while (end < t.length && t[end] !== 0) end += t[end]! + 1
    return t.subarray(12, end + 1)
  }

  /** The next hostile packet. */
  next(): Buffer {
    const r = this.rng
    const kind = r.int(100)
    if (kind < 25) return this.randomBytes()
    if (kind < 50) return this.mutated()
    if (kind < 60) return this.pointers()
    if (kind < 70) return this.limits()
    if (kind < 85) return this.ednsGarbage()
    if (kind < 95) return this.badHeader()
    return this.flags()
  }

  private randomBytes(): Buffer {
    this.made[0]!++
    const r = this.rng
    const len = r.int(8) === 0 ? r.int(12) : 12 + r.int(r.int(4) === 0 ? 1200 : 80)
    const b = Buffer.allocUnsafe(len)
    r.fill(b)
    if (len >= 6 && r.int(2) === 0) {
      b[2] = b[2]! & 0x79
      b.writeUInt16BE(1, 4)
    } // looks like a query: QR clear, opcode 0-ish, one question
    return b
  }

  private mutated(): Buffer {
    this.made[1]!++
    const r = this.rng
    const t = this.templates[r.int(this.templates.length)]!
    const b = Buffer.from(t)
    b.writeUInt16BE(r.int(0x10000), 0)
    const how = r.int(4)
    if (how === 0) return b.subarray(0, r.int(b.length)) // cut anywhere
    if (how === 1) {
      const tail = Buffer.allocUnsafe(1 + r.int(40))
      r.fill(tail)
      return Buffer.concat([b, tail])
    } // trailing bytes
    const flips = 1 + r.int(4)
    for (let i = 0; i < flips; i++) {
      const at = r.int(b.length)
      b[at] = how === 2 ? b[at]! ^ (1 << r.int(8)) : r.int(256)
    }
    return b
  }

  private pointers(): Buffer {
    this.made[2]!++
    const r = this.rng
    const h = header(r.int(0x10000), 0x0100, 1, 0, 0, 0)
    const qt = Buffer.from([0, 1, 0, 1])
    switch (r.int(5)) {
      case 0:
        return Buffer.concat([h, Buffer.from([0xc0, 12]), qt]) // points at itself
      case 1:
        return Buffer.concat([h, Buffer.from([1, 0x61, 0xc0, 14, 0xc0, 12]), qt]) // a loop of two
      case 2:
        return Buffer.concat([h, Buffer.from([0xc0 | r.int(64), r.int(256)]), qt]) // anywhere, past the end too
      case 3:
        return Buffer.concat([h, Buffer.from([3, 0x77, 0x77, 0x77, 0xc0, 2]), qt]) // into the header
      default:
        return Buffer.concat([h, Buffer.from([0x40 | r.int(0x80), 1, 0x61, 0]), qt]) // reserved label types 01/10
    }
  }

  private limits(): Buffer {
    this.made[3]!++
    const r = this.rng
    const h = header(r.int(0x10000), 0x0100, 1, 0, 0, 0)
    const qt = Buffer.from([0, 1, 0, 1])
    const label = (n: number): Buffer => {
      const b = Buffer.alloc(n + 1, 0x61)
      b[0] = n
      return b
    }
    switch (r.int(5)) {
      case 0:
        return Buffer.concat([h, label(62 + r.int(3)), Buffer.from([0]), qt]) // 62, 63, 64 bytes
      case 1: {
        // total 253..256
        const want = 250 + r.int(8)
        const parts: Buffer[] = []
        let len = 1
        while (len + 64 <= want) {
          parts.push(label(63))
          len += 64
        }
        if (want - len - 1 > 0) parts.push(label(want - len - 1))
        return Buffer.concat([h, ...parts, Buffer.from([0]), qt])
      }
      case 2:
        return Buffer.concat([h, ...Array.from({ length: 120 + r.int(20) }, () => label(1)), Buffer.from([0]), qt])
      case 3:
        return Buffer.concat([h, Buffer.from([40, 0x61, 0x62]), qt.subarray(0, r.int(5))]) // a label past the end
      default:
        return Buffer.concat([h, Buffer.from([0]), qt.subarray(0, r.int(4))]) // root, short question
    }
  }

  private ednsGarbage(): Buffer {
    this.made[4]!++
    const r = this.rng
    const q = question(this.name(), QTYPES[r.int(QTYPES.length)]!)
    const arCount = r.int(6) === 0 ? 2 : 1
    const h = header(r.int(0x10000), 0x0100, 1, 0, 0, arCount)
    let options: Buffer
    switch (r.int(7)) {
      case 0:
        options = ecs(3, r.int(256), r.int(256), Buffer.from([1, 2, 3]))
        break
      case 1:
        options = ecs(1, 33 + r.int(100), 0, Buffer.from([10, 0, 0, 0, 1]))
        break
      case 2:
        options = ecs(1, 8, 0, Buffer.from([10, 255]))
        break // address bytes beyond the prefix
      case 3:
        options = ecs(2, 129, 0, Buffer.alloc(17, 0x20))
        break
      case 4:
        options = ecs(1, 24, 0, Buffer.from([10, 1, 2]), 5 + r.int(30))
        break // length past the end
      case 5: {
        options = Buffer.allocUnsafe(r.int(40))
        r.fill(options)
        break
      }
      default:
        options = Buffer.from([0, 15, 0, 2, 0, 17])
        break // an EDE option in a query
    }
    const rdDelta = r.int(3) === 0 ? r.int(20) - 10 : 0
    const name = r.int(8) === 0 ? Buffer.from([1, 0x61, 0]) : Buffer.from([0])
    const first = opt(r.int(0x10000), r.int(4) === 0 ? 1 + r.int(255) : 0, options, rdDelta, name)
    const parts = [h, q, first]
    if (arCount === 2) parts.push(r.int(2) === 0 ? first : question(Buffer.from([0]), 1))
    return Buffer.concat(parts)
  }

  private badHeader(): Buffer {
    this.made[5]!++
    const r = this.rng
    const q = question(this.name(), 1)
    const counts = [0, 1, 2, 3, 0xffff]
    const h = header(
      r.int(0x10000),
      0x0100,
      counts[r.int(counts.length)]!,
      r.int(3) === 0 ? 0 : counts[r.int(counts.length)]!,
      r.int(2) === 0 ? 0 : counts[r.int(counts.length)]!,
      counts[r.int(counts.length)]!
    )
    return r.int(2) === 0 ? Buffer.concat([h, q]) : Buffer.concat([h, q, q])
  }

  private flags(): Buffer {
    this.made[6]!++
    const r = this.rng
    const b = Buffer.from(this.templates[r.int(this.templates.length)]!)
    b.writeUInt16BE(r.int(0x10000), 0)
    b.writeUInt16BE(r.int(0x10000), 2) // QR, opcode, AA, TC, RD, RA, Z, AD, CD, RCODE: anything
    return b
  }
}
