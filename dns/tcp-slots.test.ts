// The connection table's rules (./tcp-slots.ts), on plain holders: who gets a slot, who gives one
// up, how long idleness is allowed. The listener-level behaviour is in tcp-slots-campaign.test.ts.
import { test, type TestContext } from 'node:test'
import { TcpSlots, sourceKey, type SlotHolder } from './tcp-slots.js'

class Holder implements SlotHolder {
  lastActive: number
  partialSince = 0
  busy = false
  evicted = false
  constructor(lastActive: number) {
    this.lastActive = lastActive
  }
  isIdle(): boolean {
    return !this.busy && this.partialSince === 0
  }
  evict(): void {
    this.evicted = true
  }
}

test('a source is an IPv4 address or an IPv6 /64 (an IPv4-mapped address counts as its IPv4)', (t: TestContext) => {
  t.assert.strictEqual(sourceKey('192.0.2.7'), '192.0.2.7')
  t.assert.notStrictEqual(sourceKey('192.0.2.7'), sourceKey('192.0.2.8'))
  t.assert.strictEqual(sourceKey('2001:db8:1:2::1'), sourceKey('2001:db8:1:2:ffff:ffff:ffff:ffff'))
  t.assert.notStrictEqual(sourceKey('2001:db8:1:2::1'), sourceKey('2001:db8:1:3::1'))
  t.assert.strictEqual(sourceKey('::ffff:192.0.2.7'), '192.0.2.7')
})

test('a source holds at most tcp-max-per-source slots; a released slot is its own again', (t: TestContext) => {
  const slots = new TcpSlots<Holder>({ max: 100, perSource: 3, idleTimeoutMs: 10_000 })
  const mine = [1, 2, 3].map((i) => new Holder(i))
  for (const h of mine) t.assert.ok(slots.admit(h, '2001:db8::' + String(mine.indexOf(h) + 1)))
  t.assert.strictEqual(slots.admit(new Holder(4), '2001:db8::99'), false, 'the same /64')
  t.assert.ok(slots.admit(new Holder(5), '2001:db8:0:1::1'), 'another /64')
  slots.release(mine[0]!)
  slots.release(mine[0]!) // twice: no effect
  t.assert.ok(slots.admit(new Holder(6), '2001:db8::7'))
  t.assert.strictEqual(slots.admit(new Holder(7), '2001:db8::8'), false)
  t.assert.deepStrictEqual(slots.totals, { refusedPerSource: 2, refusedFull: 0, evictedIdle: 0, evictedSlow: 0 })
  t.assert.ok(
    mine.every((h) => !h.evicted),
    'the cap refuses the newcomer; it closes nobody'
  )
})

test('a full table closes the oldest idle connection, else the oldest unfinished message, else refuses', (t: TestContext) => {
  const slots = new TcpSlots<Holder>({ max: 4, perSource: 4, idleTimeoutMs: 10_000 })
  const [a, b, c, d] = [40, 10, 30, 20].map((at) => new Holder(at)) as [Holder, Holder, Holder, Holder]
  a.busy = true // a query in flight: never closed
  c.partialSince = 35 // unfinished message since 35
  d.partialSince = 25 // unfinished message since 25
  for (const [i, h] of [a, b, c, d].entries()) t.assert.ok(slots.admit(h, `10.0.0.${i}`))
  t.assert.ok(slots.admit(new Holder(50), '10.0.1.1'))
  t.assert.deepStrictEqual(
    [a, b, c, d].map((h) => h.evicted),
    [false, true, false, false],
    'the idle one first'
  )
  // No idle connection left but the newcomer; make it busy too.
  for (const h of slots.holders()) if (h.isIdle()) h.busy = true
  t.assert.ok(slots.admit(new Holder(60), '10.0.1.2'))
  t.assert.ok(d.evicted && !c.evicted, 'then the unfinished message that began first')
  for (const h of slots.holders()) {
    h.busy = true
    h.partialSince = 0
  }
  t.assert.strictEqual(slots.admit(new Holder(70), '10.0.1.3'), false, 'every connection is waiting for answers')
  t.assert.strictEqual(slots.size, 4)
  t.assert.deepStrictEqual(slots.totals, { refusedPerSource: 0, refusedFull: 1, evictedIdle: 1, evictedSlow: 1 })
})

test('the idle timeout is the configured one up to half full, then shortens to a tenth at full', (t: TestContext) => {
  const slots = new TcpSlots<Holder>({ max: 10, perSource: 10, idleTimeoutMs: 10_000 })
  const seen: number[] = [slots.idleTimeoutMs()]
  for (let i = 0; i < 10; i++) {
    slots.admit(new Holder(i), `10.0.0.${i}`)
    seen.push(slots.idleTimeoutMs())
  }
  t.assert.deepStrictEqual(seen, [10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 8200, 6400, 4600, 2800, 1000])
})

test("a newcomer that closes its own source's idle connection to make room leaves that source's count right", (t: TestContext) => {
  const slots = new TcpSlots<Holder>({ max: 2, perSource: 2, idleTimeoutMs: 10_000 })
  const [a, b] = [1, 2].map((at) => new Holder(at)) as [Holder, Holder]
  t.assert.ok(slots.admit(a, '192.0.2.1'))
  t.assert.ok(slots.admit(b, '192.0.2.2'))
  // 192.0.2.1 again: the table is full, its own idle connection (the oldest) is closed for it.
  const c = new Holder(3)
  t.assert.ok(slots.admit(c, '192.0.2.1'))
  t.assert.ok(a.evicted)
  slots.release(b)
  // It holds one slot, so a second one is its own.
  t.assert.ok(slots.admit(new Holder(4), '192.0.2.1'), 'one of two slots held: another is allowed')
})
