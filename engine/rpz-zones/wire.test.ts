import { test } from 'node:test'
import assert from 'node:assert/strict'
import { serialAdd, serialCompare, serialNewer, toSerial } from './serial.js'
import { decodeName, encodeName } from './names.js'
import {
  buildQuery,
  parseMessage,
  TYPE_AXFR,
  TYPE_CNAME,
  TYPE_IXFR,
  TYPE_SOA,
  CLASS_IN,
  type Message
} from './message.js'
import { readSoa, rdataToText } from './rdata.js'
import { TsigSigner, TsigVerifier, tsigKey, TSIG_BADKEY, TSIG_BADSIG, stripTsig } from './tsig.js'
import { cnameAction, PASSTHRU, RpzZone, type ZoneOptions } from './zone.js'
import { packRecords, transferRecords } from './transfer-out.js'

const OPTIONS: ZoneOptions = {
  origin: 'global.rpz',
  soa: { mname: 'localhost', rname: 'hostmaster.localhost', refresh: 60, retry: 10, expire: 3600, minimum: 30 },
  ttl: 30
}
const BLOCK = cnameAction('block.example.net')
const PASS = cnameAction(PASSTHRU)

test('serial arithmetic follows RFC 1982 around the wrap', () => {
  assert.equal(serialCompare(1, 2), -1)
  assert.equal(serialCompare(2, 1), 1)
  assert.equal(serialCompare(5, 5), 0)
  assert.equal(serialCompare(0xffffffff, 0), -1, '0 is newer than 2^32-1')
  assert.ok(serialNewer(3, 0xfffffff0))
  assert.ok(Number.isNaN(serialCompare(0, 0x80000000)))
  assert.equal(serialAdd(0xffffffff, 2), 1)
  assert.throws(() => serialAdd(1, 0x80000000))
  assert.equal(toSerial(2 ** 32 + 7), 7)
})

test('names round-trip and compression pointers are followed, loops refused', () => {
  const wire = encodeName('Ads.Example.COM')
  assert.deepEqual(decodeName(wire, 0), { name: 'ads.example.com', end: wire.length })
  const msg = Buffer.concat([encodeName('example.com'), Buffer.from([3, 0x77, 0x77, 0x77, 0xc0, 0])])
  assert.deepEqual(decodeName(msg, 13), { name: 'www.example.com', end: msg.length })
  assert.throws(() => decodeName(Buffer.from([0xc0, 0]), 0), /pointer loop/)
  assert.throws(() => encodeName('a'.repeat(64) + '.com'), /bad label/)
})

function zoneOf(n: number): RpzZone {
  const entries = new Map<string, string>()
  for (let i = 0; i < n; i++) {
    entries.set(`name${i}.example`, BLOCK)
    entries.set(`*.name${i}.example`, BLOCK)
  }
  entries.set('good.example', PASS)
  return new RpzZone(OPTIONS, 100, entries)
}

function records(msgs: Message[]): Array<[string, number, string]> {
  return msgs.flatMap((m) =>
    m.answer.map(
      (r) =>
        [r.name, r.type, r.type === TYPE_SOA ? String(readSoa(m.raw, r).serial) : rdataToText(m.raw, r)] as [
          string,
          number,
          string
        ]
    )
  )
}

test('an AXFR of a large zone spans several messages, SOA first and last, owners compressed', () => {
  const zone = zoneOf(2000)
  const q = { name: 'global.rpz', type: TYPE_AXFR, class: CLASS_IN }
  const msgs = [...packRecords(7, q, transferRecords(zone, TYPE_AXFR, undefined).records)].map(parseMessage)
  assert.ok(msgs.length > 3, `${msgs.length} messages`)
  for (const m of msgs) {
    assert.ok(m.raw.length <= 16384)
    assert.equal(m.header.id, 7)
    assert.ok(m.header.aa && m.header.qr)
  }
  const rs = records(msgs)
  assert.equal(rs.length, 2 + 1 + 4001)
  assert.deepEqual(rs[0], ['global.rpz', TYPE_SOA, '100'])
  assert.deepEqual(rs[rs.length - 1], ['global.rpz', TYPE_SOA, '100'])
  assert.ok(
    rs.some(([n, t, d]) => n === '*.name1999.example.global.rpz' && t === TYPE_CNAME && d === 'block.example.net')
  )
  assert.ok(rs.some(([n, , d]) => n === 'good.example.global.rpz' && d === 'rpz-passthru'))
  // Compression: 4000 owners of ~30 bytes each would not fit in this many bytes uncompressed.
  const total = msgs.reduce((s, m) => s + m.raw.length, 0)
  assert.ok(total < 4001 * (10 + 19 + 10 + 19), `${total} bytes`)
})

test('IXFR: the journal answers a known serial with the difference, an unknown one with a full zone', () => {
  const zone = zoneOf(3)
  const next = new Map(zone.entries)
  next.delete('name0.example')
  next.set('new.example', BLOCK)
  next.set('good.example', BLOCK)
  assert.equal(zone.update(105, next), 3)
  const after = new Map(next)
  after.set('later.example', BLOCK)
  zone.update(110, after)

  const q = { name: 'global.rpz', type: TYPE_IXFR, class: CLASS_IN }
  const fromStart = transferRecords(zone, TYPE_IXFR, 100)
  assert.equal(fromStart.kind, 'ixfr')
  const rs = records([...packRecords(1, q, fromStart.records)].map(parseMessage))
  const soas = rs.filter(([, t]) => t === TYPE_SOA).map(([, , s]) => s)
  assert.deepEqual(soas, ['110', '100', '110', '110'])
  const del = rs
    .slice(
      2,
      rs.findIndex(([, t], i) => i > 1 && t === TYPE_SOA)
    )
    .map(([n, , d]) => `${n} ${d}`)
  assert.deepEqual(del.sort(), ['good.example.global.rpz rpz-passthru', 'name0.example.global.rpz block.example.net'])
  assert.equal(rs.filter(([n]) => n === 'later.example.global.rpz' || n === 'new.example.global.rpz').length, 2)

  assert.equal(transferRecords(zone, TYPE_IXFR, 107).kind, 'ixfr', 'a serial between two changes is known')
  assert.equal(transferRecords(zone, TYPE_IXFR, 110).kind, 'current')
  assert.equal(transferRecords(zone, TYPE_IXFR, 90).kind, 'axfr', 'older than the journal reaches')
  assert.equal(transferRecords(zone, TYPE_IXFR, 200).kind, 'axfr', 'newer than ours')
  const changedBack = transferRecords(zone, TYPE_IXFR, 105)
  assert.equal([...changedBack.records].length, 5, 'one addition between four SOAs')
})

test('the journal drops its oldest changes past its size, and IXFR from before falls back to AXFR', () => {
  const zone = new RpzZone({ ...OPTIONS, journalOwners: 2 }, 1, new Map())
  zone.update(2, new Map([['a', BLOCK]]))
  zone.update(
    3,
    new Map([
      ['a', BLOCK],
      ['b', BLOCK]
    ])
  )
  zone.update(
    4,
    new Map([
      ['a', BLOCK],
      ['b', BLOCK],
      ['c', BLOCK]
    ])
  )
  assert.equal(zone.changesSince(1), undefined)
  assert.equal(zone.changesSince(2)?.size, 2)
})

test('TSIG: a signed multi-message stream verifies; a wrong key, a changed byte or a dropped message fail', () => {
  const key = tsigKey('xfr-key', 'hmac-sha256', Buffer.alloc(32, 7).toString('base64'))
  const keys = new Map([[key.name, key]])
  const clientSigner = new TsigSigner(key)
  const query = clientSigner.next(buildQuery(9, { name: 'global.rpz', type: TYPE_AXFR, class: CLASS_IN }))

  const server = new TsigVerifier(keys)
  const qCheck = server.check(parseMessage(query))
  assert.ok(qCheck.ok)
  assert.equal(stripTsig(query).additional.length, 0)

  const zone = zoneOf(1000)
  const signer = new TsigSigner(key, qCheck.mac)
  const q = { name: 'global.rpz', type: TYPE_AXFR, class: CLASS_IN }
  const answers = [...packRecords(9, q, transferRecords(zone, TYPE_AXFR, undefined).records)].map((m) => signer.next(m))
  assert.ok(answers.length > 1)

  const client = new TsigVerifier(keys, clientSigner.mac)
  for (const a of answers) assert.ok(client.check(parseMessage(a)).ok)

  const dropped = new TsigVerifier(keys, clientSigner.mac)
  assert.ok(dropped.check(parseMessage(answers[0]!)).ok)
  const skip = dropped.check(parseMessage(answers[2]!))
  assert.ok(!skip.ok && skip.error === TSIG_BADSIG)

  const tampered = Buffer.from(answers[0]!)
  tampered[40] = tampered[40]! ^ 1
  const bad = new TsigVerifier(keys, clientSigner.mac).check(parseMessage(tampered))
  assert.ok(!bad.ok && bad.error === TSIG_BADSIG)

  const other = tsigKey('other', 'hmac-sha256', Buffer.alloc(32, 1).toString('base64'))
  const wrong = new TsigVerifier(new Map([[other.name, other]])).check(parseMessage(query))
  assert.ok(!wrong.ok && wrong.error === TSIG_BADKEY)
  const unsigned = server.check(parseMessage(buildQuery(1, q)))
  assert.ok(!unsigned.ok && !unsigned.signed)
})

test('malformed messages are refused, not read past their end', () => {
  const q = buildQuery(3, { name: 'global.rpz', type: TYPE_AXFR, class: CLASS_IN })
  assert.throws(() => parseMessage(q.subarray(0, q.length - 1)), /truncated/)
  assert.throws(() => parseMessage(Buffer.concat([q, Buffer.from([0])])), /trailing/)
  assert.throws(() => parseMessage(Buffer.alloc(5)), /header/)
})
