import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import {
  EDNS_OPTION_COOKIE,
  EDNS_OPTION_ECS,
  EDNS_OPTION_KEEPALIVE,
  FLAG_CD,
  FLAG_RD,
  QTYPE_A,
  QTYPE_AAAA,
  QTYPE_HTTPS,
  RCODE_BADVERS,
  RCODE_FORMERR,
  RCODE_NOTIMP
} from './constants.js'
import { QUERY_DROP, QUERY_OK, QueryScratch, ecsAddressOf, keyOf, nameOf, readQuery } from './query.js'
import { atOffset, query, rawOpt, rawQuery } from './testing/build.js'

/** Runs `check` on `msg` as is and again through a Buffer at a non-zero byteOffset. */
function both(msg: Buffer, check: (m: Buffer) => void): void {
  check(msg)
  check(atOffset(msg))
}

function keys(q: QueryScratch): string[] {
  const out: string[] = []
  for (let k = 0; k < q.labelCount; k++) out.push(keyOf(q, k))
  return out
}

test('reads id, flags, type, class and question end of a typical query', (t: TestContext) => {
  const msg = query('www.example.com', 'AAAA', {
    id: 0xabcd,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED
  })
  both(msg, (m) => {
    const q = new QueryScratch()
    t.assert.strictEqual(readQuery(m, q), QUERY_OK)
    t.assert.strictEqual(q.id, 0xabcd)
    t.assert.strictEqual(q.flags & FLAG_RD, FLAG_RD)
    t.assert.strictEqual(q.flags & FLAG_CD, FLAG_CD)
    t.assert.strictEqual(q.opcode, 0)
    t.assert.strictEqual(q.qtype, QTYPE_AAAA)
    t.assert.strictEqual(q.qclass, 1)
    t.assert.strictEqual(q.questionEnd, m.length)
    t.assert.strictEqual(q.labelCount, 3)
    t.assert.strictEqual(q.nameBytes.toString('latin1', 0, q.nameLength), 'www.example.com')
    t.assert.deepStrictEqual(Array.from(q.labelStarts.subarray(0, 3)), [0, 4, 12])
    t.assert.strictEqual(q.hasEdns, false)
  })
})

test('folds A-Z to lower case and builds suffix keys at label boundaries', (t: TestContext) => {
  const q = new QueryScratch()
  both(query('WwW.ExAmPlE.CoM', 'A'), (m) => {
    t.assert.strictEqual(readQuery(m, q), QUERY_OK)
    t.assert.deepStrictEqual(keys(q), ['www.example.com', 'example.com', 'com'])
    t.assert.strictEqual(keyOf(q, 3), '')
    t.assert.strictEqual(keyOf(q, 99), '')
    t.assert.strictEqual(nameOf(q), 'www.example.com')
  })
})

test('answers the root name with an empty key and logs it as a dot', (t: TestContext) => {
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(rawQuery([], 2), q), QUERY_OK)
  t.assert.strictEqual(q.labelCount, 0)
  t.assert.strictEqual(keyOf(q, 0), '')
  t.assert.strictEqual(nameOf(q), '.')
})

test('escapes a dot inside a label so it never collides with a real label boundary', (t: TestContext) => {
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(rawQuery(['A.b', 'com']), q), QUERY_OK)
  t.assert.strictEqual(q.labelCount, 2)
  t.assert.deepStrictEqual(keys(q), ['a\\.b.com', 'com'])
  const plain = new QueryScratch()
  readQuery(rawQuery(['a', 'b', 'com']), plain)
  t.assert.notStrictEqual(keyOf(q, 0), keyOf(plain, 0))
  t.assert.strictEqual(keyOf(plain, 0), 'a.b.com')
})

test('escapes backslashes and bytes outside [a-z0-9-_*] as in RFC 1035 presentation format', (t: TestContext) => {
  const q = new QueryScratch()
  const odd = Buffer.from([0x61, 0x5c, 0x20, 0x00, 0xff, 0x2f])
  t.assert.strictEqual(readQuery(rawQuery([odd, 'X_y-*', 'net']), q), QUERY_OK)
  t.assert.deepStrictEqual(keys(q), ['a\\\\\\032\\000\\255\\047.x_y-*.net', 'x_y-*.net', 'net'])
  // A label spelled like an escape sequence must not equal the escaped byte.
  const lookalike = new QueryScratch()
  readQuery(rawQuery(['a\\.b', 'com']), lookalike)
  t.assert.strictEqual(keyOf(lookalike, 0), 'a\\\\\\.b.com')
})

test('keeps working when one scratch is reused across different queries', (t: TestContext) => {
  const q = new QueryScratch()
  readQuery(
    query('a.b.c.d.example.org', 'A', {
      edns: { options: [{ code: 8, family: 1, sourcePrefixLength: 24, ip: '192.0.2.0' }] }
    }),
    q
  )
  t.assert.strictEqual(keyOf(q, 1), 'b.c.d.example.org')
  t.assert.strictEqual(q.hasClientSubnet, true)
  t.assert.strictEqual(readQuery(query('x.io', 'A'), q), QUERY_OK)
  t.assert.deepStrictEqual(keys(q), ['x.io', 'io'])
  t.assert.strictEqual(q.hasEdns, false)
  t.assert.strictEqual(q.hasClientSubnet, false)
  t.assert.strictEqual(q.udpPayloadSize, 0)
})

test('accepts a 255-octet name and 63-octet labels, rejects 256 octets and 64-octet labels', (t: TestContext) => {
  const q = new QueryScratch()
  const l63 = 'a'.repeat(63)
  // 4 labels of 63 (4 * 64 = 256 octets) is too long; 3 * 64 + 62 + 1 (root) = 255 fits.
  const max = [l63, l63, l63, 'b'.repeat(61)]
  both(rawQuery(max), (m) => {
    t.assert.strictEqual(readQuery(m, q), QUERY_OK)
    t.assert.strictEqual(q.nameLength, 253)
    t.assert.strictEqual(keyOf(q, 0), max.join('.'))
    t.assert.doesNotThrow(() => dnsPacket.decode(m))
  })
  t.assert.strictEqual(readQuery(rawQuery([l63, l63, l63, 'b'.repeat(62)]), q), RCODE_FORMERR)
  t.assert.strictEqual(q.questionEnd, 0)
  t.assert.strictEqual(readQuery(rawQuery(['a'.repeat(64), 'com']), q), RCODE_FORMERR)
  const many = Array.from({ length: 127 }, () => 'x')
  t.assert.strictEqual(readQuery(rawQuery(many), q), QUERY_OK)
  t.assert.strictEqual(q.labelCount, 127)
  t.assert.strictEqual(keyOf(q, 126), 'x')
  t.assert.strictEqual(readQuery(rawQuery([...many, 'y']), q), RCODE_FORMERR)
})

test('drops messages shorter than a header and responses', (t: TestContext) => {
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(Buffer.alloc(0), q), QUERY_DROP)
  t.assert.strictEqual(readQuery(Buffer.alloc(11), q), QUERY_DROP)
  const response = query('example.com', 'A')
  response[2] = response[2]! | 0x80
  t.assert.strictEqual(readQuery(response, q), QUERY_DROP)
})

test('answers NOTIMP to opcodes other than QUERY', (t: TestContext) => {
  const q = new QueryScratch()
  for (const opcode of [1, 2, 4, 5, 15]) {
    const msg = query('example.com', 'A')
    msg[2] = (msg[2]! & 0x87) | (opcode << 3)
    t.assert.strictEqual(readQuery(msg, q), RCODE_NOTIMP, `opcode ${opcode}`)
    t.assert.strictEqual(q.opcode, opcode)
  }
})

test('answers FORMERR to section counts other than one question and no answers or authorities', (t: TestContext) => {
  const q = new QueryScratch()
  const base = query('example.com', 'A')
  for (const [offset, value] of [
    [5, 0],
    [5, 2],
    [7, 1],
    [9, 1],
    [4, 1]
  ] as const) {
    const msg = Buffer.from(base)
    msg[offset] = value
    t.assert.strictEqual(readQuery(msg, q), RCODE_FORMERR, `byte ${offset} = ${value}`)
  }
})

test('answers FORMERR to a compression pointer in the question (RFC 1035 §4.1.4)', (t: TestContext) => {
  const q = new QueryScratch()
  const msg = Buffer.concat([
    rawQuery(['www']).subarray(0, 12),
    Buffer.from([3, 0x77, 0x77, 0x77, 0xc0, 0x0c, 0, 1, 0, 1])
  ])
  t.assert.strictEqual(readQuery(msg, q), RCODE_FORMERR)
  t.assert.strictEqual(q.questionEnd, 0)
  const extended = rawQuery(['www'])
  extended[12] = 0x41 // extended label type 01
  t.assert.strictEqual(readQuery(extended, q), RCODE_FORMERR)
})

test('answers FORMERR to a truncated question at every cut point', (t: TestContext) => {
  const q = new QueryScratch()
  const msg = query('www.example.com', 'A')
  for (let len = 12; len < msg.length; len++) {
    t.assert.strictEqual(readQuery(msg.subarray(0, len), q), RCODE_FORMERR, `cut at ${len}`)
  }
})

test('answers FORMERR to trailing bytes after the last record', (t: TestContext) => {
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(Buffer.concat([query('example.com', 'A'), Buffer.from([0])]), q), RCODE_FORMERR)
  t.assert.strictEqual(q.questionEnd > 0, true, 'the question itself was fine')
  const edns = query('example.com', 'A', { edns: {} })
  t.assert.strictEqual(readQuery(Buffer.concat([edns, Buffer.from([0])]), q), RCODE_FORMERR)
})

test('reads EDNS payload size, DO bit and version', (t: TestContext) => {
  const q = new QueryScratch()
  both(query('example.com', 'A', { edns: { udpPayloadSize: 1400, dnssecOk: true } }), (m) => {
    t.assert.strictEqual(readQuery(m, q), QUERY_OK)
    t.assert.strictEqual(q.hasEdns, true)
    t.assert.strictEqual(q.udpPayloadSize, 1400)
    t.assert.strictEqual(q.isDnssecOk, true)
    t.assert.strictEqual(q.ednsVersion, 0)
    t.assert.strictEqual(q.optOffset, q.questionEnd)
    t.assert.strictEqual(q.hasClientSubnet, false)
  })
  readQuery(query('example.com', 'A', { edns: { dnssecOk: false } }), q)
  t.assert.strictEqual(q.isDnssecOk, false)
})

test('reads an IPv4 Client Subnet option', (t: TestContext) => {
  const q = new QueryScratch()
  const msg = query('example.com', 'A', {
    edns: { options: [{ code: 8, family: 1, sourcePrefixLength: 24, ip: '198.51.100.0' }] }
  })
  both(msg, (m) => {
    t.assert.strictEqual(readQuery(m, q), QUERY_OK)
    t.assert.strictEqual(q.hasClientSubnet, true)
    t.assert.strictEqual(q.ecsFamily, 1)
    t.assert.strictEqual(q.ecsSourcePrefix, 24)
    t.assert.strictEqual(q.ecsScopePrefix, 0)
    t.assert.strictEqual(ecsAddressOf(q), '198.51.100.0')
  })
})

test('reads IPv6 Client Subnet options, including /0 and odd prefix lengths', (t: TestContext) => {
  const q = new QueryScratch()
  const cases = [
    { prefix: 56, ip: '2001:db8:1234:5600::', want: '2001:db8:1234:5600::' },
    { prefix: 0, ip: '::', want: '::' },
    { prefix: 33, ip: '2001:db8:8000::', want: '2001:db8:8000::' },
    { prefix: 128, ip: '2001:db8::1', want: '2001:db8::1' }
  ]
  for (const c of cases) {
    const m = query('example.com', 'AAAA', {
      edns: { options: [{ code: 8, family: 2, sourcePrefixLength: c.prefix, ip: c.ip }] }
    })
    t.assert.strictEqual(readQuery(m, q), QUERY_OK, `/${c.prefix}`)
    t.assert.strictEqual(q.ecsFamily, 2)
    t.assert.strictEqual(q.ecsSourcePrefix, c.prefix)
    t.assert.strictEqual(ecsAddressOf(q), c.want)
  }
})

test('accepts cookies, keepalive and unknown options', (t: TestContext) => {
  const q = new QueryScratch()
  const opt = rawOpt([
    [EDNS_OPTION_COOKIE, Buffer.alloc(8, 7)],
    [EDNS_OPTION_KEEPALIVE, Buffer.alloc(0)],
    [65001, Buffer.from('hi')]
  ])
  const m = rawQuery(['example', 'com'], QTYPE_HTTPS, { tail: opt })
  t.assert.strictEqual(readQuery(m, q), QUERY_OK)
  t.assert.strictEqual(q.qtype, QTYPE_HTTPS)
  t.assert.strictEqual(q.hasEdns, true)
  t.assert.doesNotThrow(() => dnsPacket.decode(m))
})

test('answers FORMERR to every malformed OPT', (t: TestContext) => {
  const q = new QueryScratch()
  const ecs = (family: number, source: number, addr: number[], scope = 0): [number, Buffer] => [
    EDNS_OPTION_ECS,
    Buffer.from([family >> 8, family & 0xff, source, scope, ...addr])
  ]
  const good = rawOpt([ecs(1, 24, [192, 0, 2])])
  t.assert.strictEqual(readQuery(rawQuery(['a', 'com'], QTYPE_A, { tail: good }), q), QUERY_OK)
  const bad: Record<string, Buffer> = {
    'owner not root': Buffer.concat([Buffer.from([1, 0x61]), good.subarray(1)]),
    'not type OPT': (() => {
      const b = Buffer.from(good)
      b[2] = 1
      return b
    })(),
    'RDLENGTH past the end': (() => {
      const b = Buffer.from(good)
      b[10] = b[10]! + 1
      return b
    })(),
    'RDLENGTH short of the end': (() => {
      const b = Buffer.from(good)
      b[10] = b[10]! - 1
      return b
    })(),
    'shorter than an OPT header': good.subarray(0, 10),
    'option header cut': Buffer.concat([rawOpt([]).subarray(0, 9), Buffer.from([0, 2, 0, 8])]),
    'option length past RDATA': (() => {
      const b = rawOpt([[65001, Buffer.alloc(4)]])
      b[14] = 9
      return b
    })(),
    'ECS unknown family': rawOpt([ecs(3, 0, [])]),
    'ECS IPv4 prefix over 32': rawOpt([ecs(1, 33, [1, 2, 3, 4, 0])]),
    'ECS IPv6 prefix over 128': rawOpt([ecs(2, 129, Array(17).fill(0))]),
    'ECS too many address bytes': rawOpt([ecs(1, 16, [10, 0, 0])]),
    'ECS too few address bytes': rawOpt([ecs(1, 24, [10, 0])]),
    'ECS bits set past the prefix': rawOpt([ecs(1, 23, [10, 0, 1])]),
    'ECS shorter than 4 bytes': rawOpt([[EDNS_OPTION_ECS, Buffer.from([0, 1, 0])]]),
    'two ECS options': rawOpt([ecs(1, 8, [10]), ecs(1, 8, [10])]),
    'cookie of 9 bytes': rawOpt([[EDNS_OPTION_COOKIE, Buffer.alloc(9)]]),
    'keepalive of 1 byte': rawOpt([[EDNS_OPTION_KEEPALIVE, Buffer.alloc(1)]]),
    'two OPT records': Buffer.concat([good, good])
  }
  for (const [name, tail] of Object.entries(bad)) {
    const m = rawQuery(['a', 'com'], QTYPE_A, { tail })
    if (name === 'two OPT records') m[11] = 2
    t.assert.strictEqual(readQuery(m, q), RCODE_FORMERR, name)
    t.assert.strictEqual(q.hasEdns, false, `${name}: no OPT echoed`)
    t.assert.strictEqual(q.questionEnd > 0, true, `${name}: the question is still echoed`)
  }
})

test('answers FORMERR to a non-OPT additional record', (t: TestContext) => {
  const q = new QueryScratch()
  const a = Buffer.from([0, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1])
  t.assert.strictEqual(readQuery(rawQuery(['a', 'com'], QTYPE_A, { tail: a }), q), RCODE_FORMERR)
})

test('answers BADVERS to an EDNS version other than 0 (RFC 6891 §6.1.3)', (t: TestContext) => {
  const q = new QueryScratch()
  const m = rawQuery(['a', 'com'], QTYPE_A, { tail: rawOpt([], { version: 1, flags: 0x8000 }) })
  t.assert.strictEqual(readQuery(m, q), RCODE_BADVERS)
  t.assert.strictEqual(q.hasEdns, true)
  t.assert.strictEqual(q.ednsVersion, 1)
  t.assert.strictEqual(q.isDnssecOk, true)
})

test('agrees with dns-packet on the question of valid queries', (t: TestContext) => {
  const q = new QueryScratch()
  for (const [name, type] of [
    ['a.io', 'A'],
    ['Mixed.Case.Example', 'TXT'],
    ['_sip._tcp.example.com', 'SRV'],
    ['x.y', 'UNKNOWN_64']
  ] as const) {
    const m = query(name, type as dnsPacket.RecordType, { edns: { udpPayloadSize: 1232 } })
    t.assert.strictEqual(readQuery(m, q), QUERY_OK)
    const d = dnsPacket.decode(m)
    t.assert.strictEqual(nameOf(q), d.questions![0]!.name.toLowerCase())
    t.assert.strictEqual(q.questionEnd, 12 + name.length + 2 + 4)
    t.assert.strictEqual(q.qtype, type === 'UNKNOWN_64' ? 64 : q.qtype)
  }
})
