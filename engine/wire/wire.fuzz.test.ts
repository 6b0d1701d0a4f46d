// Fuzzing the wire layer against dns-packet's verdict. Time-boxed: each
// property stops after its share of FUZZ_MS (default 5000 ms in total) or
// its run budget, whichever comes first, so CI stays fast.
import { test, type TestContext } from 'node:test'
import fc from 'fast-check'
import dnsPacket from 'dns-packet'
import { EDE_NO_REACHABLE_AUTHORITY, RCODE_SERVFAIL, ANSWER_BUFFER_SIZE } from './constants.js'
import { compileBlockAnswer, writeBlockAnswer, writeCnameAnswer, writeErrorAnswer } from './answer.js'
import { questionMatches } from './forward.js'
import { QUERY_DROP, QUERY_OK, QueryScratch, keyOf, nameOf, readQuery } from './query.js'
import { formatIPv4, formatIPv6 } from './ip.js'
import { FrameReader, frame } from './tcp-frame.js'
import { query } from './testing/build.js'

const totalMs = Number(process.env.FUZZ_MS ?? 5000)
const budget = (share: number): fc.Parameters<unknown> => ({
  numRuns: 200_000,
  interruptAfterTimeLimit: Math.max(100, Math.floor(totalMs * share)),
  markInterruptAsFailure: false,
  includeErrorInReport: true,
  seed: process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
})

const block = compileBlockAnswer({ ipv4: '192.0.2.1', ipv6: '2001:db8::1', edeExtraText: 'blocked' })
const addrs = [
  { type: 'A' as const, data: '192.0.2.7', ttl: 60 },
  { type: 'AAAA' as const, data: '2001:db8::7', ttl: 60 }
]
const q = new QueryScratch()
const out = Buffer.alloc(ANSWER_BUFFER_SIZE)

function decodes(bytes: Buffer): boolean {
  try {
    dnsPacket.decode(bytes)
    return true
  } catch {
    return false
  }
}

/** The whole contract, checked for one input. Throws (fails the property) on any violation. */
function check(msg: Buffer): void {
  const verdict = readQuery(msg, q)
  if (verdict === QUERY_DROP) return
  if (verdict !== QUERY_OK) {
    const len = writeErrorAnswer(msg, q, verdict, out)
    if (!decodes(out.subarray(0, len))) throw new Error(`error answer ${verdict} does not decode`)
    return
  }
  let decoded: dnsPacket.DecodedPacket
  try {
    decoded = dnsPacket.decode(msg)
  } catch (err) {
    throw new Error(`readQuery said OK but dns-packet cannot decode: ${String(err)}`)
  }
  const dq = decoded.questions?.[0]
  if (decoded.questions?.length !== 1 || dq === undefined) throw new Error('OK without exactly one question')
  if (!q.needsEscape && nameOf(q) !== (q.labelCount === 0 ? '.' : dq.name.toLowerCase())) {
    throw new Error(`name ${nameOf(q)} != ${dq.name}`)
  }
  for (let k = 0; k <= q.labelCount; k++) keyOf(q, k)
  for (const [name, write] of [
    ['block', () => writeBlockAnswer(msg, q, out, block)],
    ['servfail', () => writeErrorAnswer(msg, q, RCODE_SERVFAIL, out, EDE_NO_REACHABLE_AUTHORITY)],
    ['cname', () => writeCnameAnswer(msg, q, 'restrict.youtube.com', addrs, out)]
  ] as const) {
    const answer = out.subarray(0, write())
    if (!decodes(answer)) throw new Error(`${name} answer does not decode`)
    if (!questionMatches(answer, q)) throw new Error(`${name} answer question does not match`)
  }
}

// An all-ones address cut to `prefix` bits: dns-packet sends the address as given, and RFC 7871 §6 wants the rest zero.
function masked(size: number, prefix: number): Buffer {
  const b = Buffer.alloc(size)
  for (let bit = 0; bit < prefix; bit++) b[bit >> 3] = b[bit >> 3]! | (0x80 >> (bit & 7))
  return b
}

const label = fc.stringMatching(/^[a-zA-Z0-9_-]{1,20}$/)
const validQuery = fc
  .record({
    labels: fc.array(label, { minLength: 0, maxLength: 6 }),
    type: fc.constantFrom<dnsPacket.RecordType>(
      'A',
      'AAAA',
      'TXT',
      'MX',
      'NS',
      'CNAME',
      'UNKNOWN_65' as dnsPacket.RecordType,
      'UNKNOWN_64' as dnsPacket.RecordType
    ),
    id: fc.integer({ min: 0, max: 0xffff }),
    edns: fc.option(
      fc.record({
        udpPayloadSize: fc.integer({ min: 0, max: 0xffff }),
        dnssecOk: fc.boolean(),
        ecs: fc.option(
          fc.oneof(
            fc
              .integer({ min: 0, max: 32 })
              .map((p) => ({ code: 8 as const, family: 1, sourcePrefixLength: p, ip: formatIPv4(masked(4, p), 0) })),
            fc
              .integer({ min: 0, max: 128 })
              .map((p) => ({ code: 8 as const, family: 2, sourcePrefixLength: p, ip: formatIPv6(masked(16, p), 0) }))
          )
        )
      })
    )
  })
  .map(({ labels, type, id, edns }) =>
    query(labels.length === 0 ? '.' : labels.join('.'), type, {
      id,
      ...(edns === null
        ? {}
        : {
            edns: {
              udpPayloadSize: edns.udpPayloadSize,
              dnssecOk: edns.dnssecOk,
              options: edns.ecs === null ? [] : [edns.ecs]
            }
          })
    })
  )

// A valid query with a few bytes overwritten, cut, or extended.
const mutatedQuery = fc
  .tuple(
    validQuery,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
    fc.option(fc.nat()),
    fc.uint8Array({ maxLength: 8 })
  )
  .map(([msg, edits, cut, extra]) => {
    const b = Buffer.from(msg)
    for (const [pos, value] of edits) b[pos % b.length] = value
    const cutAt = cut === null ? b.length : cut % (b.length + 1)
    return Buffer.concat([b.subarray(0, cutAt), extra.length > 2 ? Buffer.from(extra) : Buffer.alloc(0)])
  })

// A plausible query header followed by random bytes: reaches the name and OPT parsers far more often than pure noise.
const headerThenNoise = fc
  .tuple(fc.integer({ min: 0, max: 1 }), fc.uint8Array({ maxLength: 300 }))
  .map(([ar, body]) =>
    Buffer.concat([Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, ar]), Buffer.from(body)])
  )

test('readQuery never throws and never accepts what dns-packet cannot decode (random bytes)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
      check(Buffer.from(bytes))
    }),
    budget(0.2)
  )
})

test('readQuery and every writer hold their contract on mutated queries', () => {
  fc.assert(fc.property(mutatedQuery, check), budget(0.3))
})

test('readQuery and every writer hold their contract on a query header followed by noise', () => {
  fc.assert(fc.property(headerThenNoise, check), budget(0.25))
})

test('readQuery accepts every well-formed query dns-packet encodes and keys agree with the name', (t: TestContext) => {
  fc.assert(
    fc.property(validQuery, (msg) => {
      const verdict = readQuery(msg, q)
      t.assert.strictEqual(verdict, QUERY_OK)
      const name = dnsPacket.decode(msg).questions![0]!.name.toLowerCase()
      t.assert.strictEqual(keyOf(q, 0), name === '.' ? '' : name)
      check(msg)
    }),
    budget(0.15)
  )
})

test('FrameReader yields the same messages however the stream is chunked', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 6 }),
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
      (msgs, sizes) => {
        const stream = Buffer.concat(msgs.map((m) => frame(Buffer.from(m))))
        const r = new FrameReader()
        const got: Buffer[] = []
        for (let off = 0, k = 0; off < stream.length; k++) {
          const n = sizes[k % sizes.length]!
          r.push(stream.subarray(off, off + n))
          off += n
          for (let m = r.read(); m !== null; m = r.read()) got.push(Buffer.from(m))
        }
        if (got.length !== msgs.length || got.some((m, i) => !m.equals(Buffer.from(msgs[i]!))))
          throw new Error('frames differ')
      }
    ),
    budget(0.1)
  )
})
