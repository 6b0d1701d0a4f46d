import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import {
  EDE_BLOCKED,
  EDE_FILTERED,
  EDE_NO_REACHABLE_AUTHORITY,
  RCODE_BADVERS,
  RCODE_FORMERR,
  RCODE_NOTIMP,
  RCODE_REFUSED,
  RCODE_SERVFAIL,
  ANSWER_BUFFER_SIZE
} from './constants.js'
import {
  compileBlockAnswer,
  compileEdeText,
  decodeAddresses,
  writeBlockAnswer,
  writeCnameAnswer,
  writeErrorAnswer
} from './answer.js'
import { QUERY_OK, QueryScratch, readQuery } from './query.js'
import { atOffset, decode, optOf, outAtOffset, query, rawOpt, rawQuery, type Decoded } from './testing/build.js'

const block = compileBlockAnswer({
  ipv4: '192.0.2.80',
  ipv6: '2001:db8::80',
  ttl: 42,
  edeInfoCode: EDE_BLOCKED,
  edeExtraText: 'Blocked by policy'
})

function read(msg: Buffer): QueryScratch {
  const q = new QueryScratch()
  const verdict = readQuery(msg, q)
  if (verdict !== QUERY_OK) throw new Error(`verdict ${verdict}`)
  return q
}

/** Writes with `write` into a plain buffer and into one at a non-zero offset, from a query at a non-zero offset too; returns both decodings. */
function writeBoth(
  msg: Buffer,
  write: (m: Buffer, q: QueryScratch, out: Buffer) => number
): Array<{ bytes: Buffer; p: Decoded }> {
  const results = []
  for (const [m, out] of [
    [msg, Buffer.alloc(1232)],
    [atOffset(msg), outAtOffset()]
  ] as const) {
    const len = write(m, read(m), out)
    const bytes = Buffer.from(out.subarray(0, len))
    results.push({ bytes, p: decode(bytes) })
  }
  return results
}

/** The EDE option of a decoded packet as { code, text }, or undefined. */
function edeOf(p: dnsPacket.DecodedPacket): { code: number; text: string } | undefined {
  const opt = optOf(p)
  const o = opt?.options.find((x) => (x.code as number) === 15)
  if (o?.data === undefined) return undefined
  return { code: o.data.readUInt16BE(0), text: o.data.subarray(2).toString('utf8') }
}

test('answers a blocked A query with the block-page IPv4 address', (t: TestContext) => {
  const msg = query('Ads.Example.COM', 'A', {
    id: 0x4242,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED
  })
  for (const { bytes, p } of writeBoth(msg, (m, q, out) => writeBlockAnswer(m, q, out, block))) {
    t.assert.strictEqual(p.id, 0x4242)
    t.assert.strictEqual(p.type, 'response')
    t.assert.strictEqual(p.opcode, 'QUERY')
    t.assert.strictEqual(p.rcode, 'NOERROR')
    t.assert.strictEqual(p.flag_rd, true)
    t.assert.strictEqual(p.flag_ra, true)
    t.assert.strictEqual(p.flag_cd, true)
    t.assert.strictEqual(p.flag_aa, false)
    t.assert.strictEqual(p.flag_tc, false)
    t.assert.strictEqual(p.flag_ad, false)
    t.assert.deepStrictEqual(
      p.questions,
      [{ name: 'Ads.Example.COM', type: 'A', class: 'IN' }],
      'question case is preserved'
    )
    t.assert.strictEqual(p.answers!.length, 1)
    t.assert.deepStrictEqual(p.answers![0], {
      name: 'Ads.Example.COM',
      type: 'A',
      ttl: 42,
      class: 'IN',
      flush: false,
      data: '192.0.2.80'
    })
    t.assert.strictEqual(p.authorities!.length, 0)
    t.assert.strictEqual(p.additionals!.length, 0, 'no OPT when the query had none')
    t.assert.strictEqual(bytes.readUInt16BE(msg.length), 0xc00c, 'owner is a pointer to the question')
    t.assert.strictEqual(bytes.length, msg.length + 16)
  }
})

test('answers a blocked AAAA query with the block-page IPv6 address', (t: TestContext) => {
  for (const { p } of writeBoth(query('ads.example', 'AAAA', { flags: 0 }), (m, q, out) =>
    writeBlockAnswer(m, q, out, block)
  )) {
    t.assert.strictEqual(p.flag_rd, false)
    t.assert.deepStrictEqual(p.answers, [
      { name: 'ads.example', type: 'AAAA', ttl: 42, class: 'IN', flush: false, data: '2001:db8::80' }
    ])
  }
})

test('answers NODATA to HTTPS, SVCB, MX and to an address family with no block-page address', (t: TestContext) => {
  const v4only = compileBlockAnswer({ ipv4: '192.0.2.80' })
  const cases: Array<[Buffer, string]> = [
    [rawQuery(['ads', 'example'], 65), 'HTTPS'],
    [rawQuery(['ads', 'example'], 64), 'SVCB'],
    [query('ads.example', 'MX'), 'MX'],
    [rawQuery(['ads', 'example'], 1, { qclass: 3 }), 'A in class CH']
  ]
  for (const [msg, label] of cases) {
    for (const { p } of writeBoth(msg, (m, q, out) => writeBlockAnswer(m, q, out, block))) {
      t.assert.strictEqual(p.rcode, 'NOERROR', label)
      t.assert.strictEqual(p.answers!.length, 0, label)
      t.assert.strictEqual(p.questions!.length, 1, label)
    }
  }
  for (const { p } of writeBoth(query('ads.example', 'AAAA'), (m, q, out) => writeBlockAnswer(m, q, out, v4only))) {
    t.assert.strictEqual(p.answers!.length, 0)
  }
})

test('appends an OPT with an Extended DNS Error when the blocked query had EDNS', (t: TestContext) => {
  const msg = query('ads.example', 'A', {
    edns: {
      udpPayloadSize: 4096,
      dnssecOk: true,
      options: [{ code: 8, family: 1, sourcePrefixLength: 24, ip: '10.1.2.0' }]
    }
  })
  const filtered = compileBlockAnswer({
    ipv4: '192.0.2.80',
    edeInfoCode: EDE_FILTERED,
    edeExtraText: 'filtered: ads ✓'
  })
  for (const { bytes, p } of writeBoth(msg, (m, q, out) => writeBlockAnswer(m, q, out, filtered))) {
    t.assert.strictEqual(p.answers!.length, 1)
    const opt = optOf(p)!
    t.assert.strictEqual(opt.name, '.')
    t.assert.strictEqual(opt.udpPayloadSize, 1232)
    t.assert.strictEqual(opt.ednsVersion, 0)
    t.assert.strictEqual(opt.extendedRcode, 0)
    t.assert.strictEqual(opt.flag_do, true)
    t.assert.strictEqual(opt.options.length, 1, 'the ECS option is not echoed')
    t.assert.deepStrictEqual(edeOf(p), { code: EDE_FILTERED, text: 'filtered: ads ✓' })
    // Raw option bytes: code 15, length 2 + text, INFO-CODE 17.
    const text = Buffer.from('filtered: ads ✓')
    const tail = bytes.subarray(bytes.length - 6 - text.length)
    t.assert.deepStrictEqual([...tail.subarray(0, 6)], [0, 15, 0, 2 + text.length, 0, 17])
    t.assert.strictEqual(bytes.length <= 512, true)
  }
  const noText = compileBlockAnswer({ ipv4: '192.0.2.80' })
  for (const { p } of writeBoth(query('ads.example', 'A', { edns: {} }), (m, q, out) =>
    writeBlockAnswer(m, q, out, noText)
  )) {
    t.assert.deepStrictEqual(edeOf(p), { code: EDE_BLOCKED, text: '' })
    t.assert.strictEqual(optOf(p)!.flag_do, false)
  }
})

test('clips a long EDE text on a character boundary and keeps the answer under 512 bytes', (t: TestContext) => {
  const long = compileBlockAnswer({ ipv6: '2001:db8::1', edeExtraText: 'é'.repeat(200) })
  t.assert.strictEqual(long.edeExtraText!.length, 128)
  t.assert.strictEqual(long.edeExtraText!.toString('utf8'), 'é'.repeat(64))
  const name = Array.from({ length: 4 }, (_, k) => String(k).repeat(k === 3 ? 61 : 63)).join('.')
  const msg = query(name, 'AAAA', { edns: {} })
  const q = read(msg)
  const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
  const len = writeBlockAnswer(msg, q, out, long)
  t.assert.strictEqual(len <= 512, true, `length ${len}`)
  t.assert.strictEqual(decode(out.subarray(0, len)).answers!.length, 1)
})

test('rejects block-page addresses that are not IP addresses', (t: TestContext) => {
  t.assert.throws(() => compileBlockAnswer({ ipv4: '192.0.2' }), TypeError)
  t.assert.throws(() => compileBlockAnswer({ ipv6: '2001:db8:::1' }), TypeError)
  t.assert.deepStrictEqual(
    [...compileBlockAnswer({ ipv6: '::ffff:192.0.2.1' }).ipv6!],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1]
  )
})

test('answers FORMERR without a question when the question could not be parsed', (t: TestContext) => {
  const msg = rawQuery(['a'.repeat(64)], 1, { id: 0x0102 })
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(msg, q), RCODE_FORMERR)
  const out = outAtOffset()
  const p = decode(out.subarray(0, writeErrorAnswer(msg, q, RCODE_FORMERR, out)))
  t.assert.strictEqual(p.id, 0x0102)
  t.assert.strictEqual(p.type, 'response')
  t.assert.strictEqual(p.rcode, 'FORMERR')
  t.assert.strictEqual(p.flag_rd, true)
  t.assert.strictEqual(p.questions!.length, 0)
  t.assert.strictEqual(p.additionals!.length, 0)
})

test('answers FORMERR with the question echoed when only the rest was malformed', (t: TestContext) => {
  const msg = Buffer.concat([query('example.com', 'A', { id: 7 }), Buffer.from([1, 2, 3])])
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(msg, q), RCODE_FORMERR)
  const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
  const p = decode(out.subarray(0, writeErrorAnswer(msg, q, RCODE_FORMERR, out)))
  t.assert.deepStrictEqual(p.questions, [{ name: 'example.com', type: 'A', class: 'IN' }])
  t.assert.strictEqual(p.rcode, 'FORMERR')
})

test('answers NOTIMP with the opcode copied', (t: TestContext) => {
  const msg = query('example.com', 'SOA')
  msg[2] = (msg[2]! & 0x87) | (4 << 3) // NOTIFY
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(msg, q), RCODE_NOTIMP)
  const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
  const p = decode(out.subarray(0, writeErrorAnswer(msg, q, RCODE_NOTIMP, out)))
  t.assert.strictEqual(p.opcode, 'NOTIFY')
  t.assert.strictEqual(p.rcode, 'NOTIMP')
  t.assert.strictEqual(p.type, 'response')
})

test('answers SERVFAIL to an upstream timeout with EDE 22 when the query had EDNS', (t: TestContext) => {
  const text = compileEdeText('upstream timeout')
  for (const { p } of writeBoth(query('slow.example', 'A', { edns: { dnssecOk: true } }), (m, q, out) =>
    writeErrorAnswer(m, q, RCODE_SERVFAIL, out, EDE_NO_REACHABLE_AUTHORITY, text)
  )) {
    t.assert.strictEqual(p.rcode, 'SERVFAIL')
    t.assert.strictEqual(p.flag_ra, true)
    t.assert.deepStrictEqual(p.questions, [{ name: 'slow.example', type: 'A', class: 'IN' }])
    t.assert.strictEqual(p.answers!.length, 0)
    t.assert.deepStrictEqual(edeOf(p), { code: 22, text: 'upstream timeout' })
    t.assert.strictEqual(optOf(p)!.flag_do, true)
  }
  for (const { p } of writeBoth(query('slow.example', 'A'), (m, q, out) =>
    writeErrorAnswer(m, q, RCODE_REFUSED, out, EDE_NO_REACHABLE_AUTHORITY)
  )) {
    t.assert.strictEqual(p.rcode, 'REFUSED')
    t.assert.strictEqual(p.additionals!.length, 0, 'no OPT without EDNS in the query')
  }
})

test('answers BADVERS through the OPT extended RCODE', (t: TestContext) => {
  const msg = rawQuery(['a', 'com'], 1, { tail: rawOpt([], { version: 2 }) })
  const q = new QueryScratch()
  t.assert.strictEqual(readQuery(msg, q), RCODE_BADVERS)
  const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
  const p = decode(out.subarray(0, writeErrorAnswer(msg, q, RCODE_BADVERS, out)))
  t.assert.strictEqual(p.rcode, 'NOERROR', 'lower 4 bits are 0')
  t.assert.strictEqual(optOf(p)!.extendedRcode, 1)
  t.assert.strictEqual(optOf(p)!.ednsVersion, 0)
})

test('answers an error without a scratch from the header alone', (t: TestContext) => {
  const msg = query('example.com', 'A', { id: 99 })
  const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
  const p = decode(out.subarray(0, writeErrorAnswer(msg, null, RCODE_SERVFAIL, out)))
  t.assert.strictEqual(p.id, 99)
  t.assert.strictEqual(p.rcode, 'SERVFAIL')
  t.assert.strictEqual(p.questions!.length, 0)
})

test('answers safe video with a CNAME to the restricted host and its addresses', (t: TestContext) => {
  const addrs = [
    { type: 'A' as const, data: '216.239.38.120', ttl: 300 },
    { type: 'AAAA' as const, data: '2001:4860:4802:32::78', ttl: 200 },
    { type: 'A' as const, data: '216.239.38.121', ttl: 100 }
  ]
  for (const { p } of writeBoth(query('WWW.YouTube.com', 'A', { id: 5 }), (m, q, out) =>
    writeCnameAnswer(m, q, 'restrict.youtube.com', addrs, out)
  )) {
    t.assert.strictEqual(p.id, 5)
    t.assert.strictEqual(p.rcode, 'NOERROR')
    t.assert.deepStrictEqual(p.answers, [
      { name: 'WWW.YouTube.com', type: 'CNAME', ttl: 100, class: 'IN', flush: false, data: 'restrict.youtube.com' },
      { name: 'restrict.youtube.com', type: 'A', ttl: 300, class: 'IN', flush: false, data: '216.239.38.120' },
      { name: 'restrict.youtube.com', type: 'A', ttl: 100, class: 'IN', flush: false, data: '216.239.38.121' }
    ])
    t.assert.strictEqual(p.additionals!.length, 0)
  }
  for (const { p } of writeBoth(query('m.youtube.com', 'AAAA', { edns: {} }), (m, q, out) =>
    writeCnameAnswer(m, q, 'restrict.youtube.com.', addrs, out, { cnameTtl: 60 })
  )) {
    t.assert.deepStrictEqual(
      p.answers!.map((a) => [a.type, a.name, (a as dnsPacket.StringAnswer).data, (a as dnsPacket.StringAnswer).ttl]),
      [
        ['CNAME', 'm.youtube.com', 'restrict.youtube.com', 60],
        ['AAAA', 'restrict.youtube.com', '2001:4860:4802:32::78', 200]
      ]
    )
    t.assert.strictEqual(optOf(p)!.options.length, 0)
  }
  for (const { p } of writeBoth(rawQuery(['www', 'youtube', 'com'], 65), (m, q, out) =>
    writeCnameAnswer(m, q, 'restrict.youtube.com', addrs, out)
  )) {
    t.assert.deepStrictEqual(
      p.answers!.map((a) => a.type),
      ['CNAME']
    )
  }
})

test('sets TC and leaves out addresses that do not fit the client limit', (t: TestContext) => {
  const addrs = Array.from({ length: 40 }, (_, k) => ({ type: 'A' as const, data: `10.0.0.${k}`, ttl: 30 }))
  const msg = query('www.youtube.com', 'A')
  const q = read(msg)
  const out = Buffer.alloc(1232)
  const len = writeCnameAnswer(msg, q, 'restrict.youtube.com', addrs, out)
  t.assert.strictEqual(len <= 512, true)
  const p = decode(out.subarray(0, len))
  t.assert.strictEqual(p.flag_tc, true)
  t.assert.strictEqual(p.answers!.length > 10 && p.answers!.length < 41, true)
  const all = writeCnameAnswer(msg, q, 'restrict.youtube.com', addrs, out, { maxSize: 1232 })
  const p2 = decode(out.subarray(0, all))
  t.assert.strictEqual(p2.flag_tc, false)
  t.assert.strictEqual(p2.answers!.length, 41)
})

test('extracts the RCODE and the A/AAAA records of an upstream response', (t: TestContext) => {
  const response = dnsPacket.encode({
    type: 'response',
    id: 1,
    flags: dnsPacket.RECURSION_AVAILABLE,
    questions: [{ name: 'restrict.youtube.com', type: 'A' }],
    answers: [
      { name: 'restrict.youtube.com', type: 'CNAME', ttl: 10, data: 'x.example' },
      { name: 'x.example', type: 'A', ttl: 20, data: '192.0.2.9' },
      { name: 'x.example', type: 'AAAA', ttl: 30, data: '2001:db8::9' }
    ]
  })
  t.assert.deepStrictEqual(decodeAddresses(response), {
    rcode: 0,
    records: [
      { type: 'A', data: '192.0.2.9', ttl: 20 },
      { type: 'AAAA', data: '2001:db8::9', ttl: 30 }
    ]
  })
  const nx = dnsPacket.encode({ type: 'response', id: 1, flags: 3, questions: [{ name: 'nope.example', type: 'A' }] })
  t.assert.deepStrictEqual(decodeAddresses(nx), { rcode: 3, records: [] })
  t.assert.strictEqual(decodeAddresses(Buffer.from([1, 2, 3])), undefined)
})
