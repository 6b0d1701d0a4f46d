import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { isResponse, isTruncated, questionMatches, rcodeOf, readId, setId } from './forward.js'
import { QUERY_OK, QueryScratch, readQuery } from './query.js'
import { atOffset, query, rawQuery } from './testing/build.js'

function response(name: string, type: dnsPacket.RecordType, flags = 0): Buffer {
  return dnsPacket.encode({ type: 'response', id: 9, flags, questions: [{ name, type, class: 'IN' }] })
}

function scratchOf(msg: Buffer): QueryScratch {
  const q = new QueryScratch()
  if (readQuery(msg, q) !== QUERY_OK) throw new Error('bad query')
  return q
}

test('reads and rewrites the message ID in place', (t: TestContext) => {
  const msg = atOffset(query('example.com', 'A', { id: 0x1234 }))
  t.assert.strictEqual(readId(msg), 0x1234)
  setId(msg, 0xfedc)
  t.assert.strictEqual(readId(msg), 0xfedc)
  t.assert.strictEqual(dnsPacket.decode(msg).id, 0xfedc)
  t.assert.strictEqual(readId(Buffer.alloc(1)), -1)
  t.assert.doesNotThrow(() => setId(Buffer.alloc(1), 1))
})

test('matches a response question case-insensitively with the same type and class', (t: TestContext) => {
  const q = scratchOf(query('WWW.Example.com', 'A'))
  t.assert.strictEqual(questionMatches(response('www.example.COM', 'A'), q), true)
  t.assert.strictEqual(questionMatches(atOffset(response('www.example.com', 'A')), q), true)
  t.assert.strictEqual(questionMatches(response('www.example.com', 'AAAA'), q), false)
  t.assert.strictEqual(questionMatches(response('www.example.org', 'A'), q), false)
  t.assert.strictEqual(questionMatches(response('www.example.com.au', 'A'), q), false)
  t.assert.strictEqual(questionMatches(response('example.com', 'A'), q), false)
  t.assert.strictEqual(questionMatches(response('wwwexample.com', 'A'), q), false)
})

test('does not match a response whose question differs in class, count or framing', (t: TestContext) => {
  const q = scratchOf(query('a.example', 'A'))
  const ch = rawQuery(['a', 'example'], 1, { qclass: 3 })
  ch[2] = ch[2]! | 0x80
  t.assert.strictEqual(questionMatches(ch, q), false)
  const good = response('a.example', 'A')
  t.assert.strictEqual(questionMatches(good, q), true)
  for (let len = 0; len < good.length; len++)
    t.assert.strictEqual(questionMatches(good.subarray(0, len), q), false, `cut at ${len}`)
  const none = Buffer.from(good)
  none[5] = 0
  t.assert.strictEqual(questionMatches(none, q), false)
  const dotted = scratchOf(rawQuery(['a.example']))
  t.assert.strictEqual(questionMatches(good, dotted), false, 'a label holding a dot is not two labels')
  const root = scratchOf(rawQuery([], 2))
  t.assert.strictEqual(questionMatches(response('.', 'NS'), root), true)
})

test('reads the TC bit, the QR bit and the RCODE', (t: TestContext) => {
  t.assert.strictEqual(isTruncated(response('a.example', 'A', dnsPacket.TRUNCATED_RESPONSE)), true)
  t.assert.strictEqual(isTruncated(response('a.example', 'A')), false)
  t.assert.strictEqual(isTruncated(Buffer.alloc(3, 0xff)), false)
  t.assert.strictEqual(isResponse(response('a.example', 'A')), true)
  t.assert.strictEqual(isResponse(query('a.example', 'A')), false)
  t.assert.strictEqual(rcodeOf(response('a.example', 'A', 3)), 3)
  t.assert.strictEqual(rcodeOf(response('a.example', 'A', 2)), 2)
  t.assert.strictEqual(rcodeOf(Buffer.alloc(4)), -1)
})
