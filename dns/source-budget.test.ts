// The per-source account of the DoH front (./source-budget.ts), on explicit clocks: resets leak
// away, a source past its burst is calmed until enough is forgiven, queries in flight are capped,
// and a source with nothing left to account for is forgotten.
import { test, type TestContext } from 'node:test'
import { LeakyCount, SourceBudget } from './source-budget.js'

test('a leaky count loses its rate per second, never below zero', (t: TestContext) => {
  const c = new LeakyCount(10)
  for (let i = 0; i < 30; i++) c.add(1000)
  t.assert.strictEqual(c.valueAt(1000), 30)
  t.assert.strictEqual(c.valueAt(2000), 20)
  t.assert.strictEqual(c.valueAt(5000), 0)
  t.assert.strictEqual(c.add(5000), 1)
})

test('a source past its reset burst is calmed, across its connections, until enough is forgiven', (t: TestContext) => {
  const b = new SourceBudget({ resetBurst: 5, resetsPerSecond: 10, maxInflight: 100 })
  const first = b.join('2001:db8::1')
  const second = b.join('2001:db8::2') // the same /64: the same account
  t.assert.strictEqual(first, second)
  for (let i = 0; i < 5; i++) t.assert.strictEqual(b.reset(i % 2 === 0 ? first : second, 0), false)
  t.assert.strictEqual(b.reset(first, 0), true, 'the sixth reset')
  t.assert.ok(b.isCalmed('2001:db8::99', 0))
  t.assert.ok(!b.isCalmed('2001:db8:0:1::1', 0), 'another /64')
  t.assert.ok(!b.isCalmed('2001:db8::99', 200), 'two forgiven after 200 ms')
})

test("a source's queries in flight are capped; a source with nothing left is forgotten", (t: TestContext) => {
  const b = new SourceBudget({ resetBurst: 5, resetsPerSecond: 10, maxInflight: 2 })
  const a = b.join('192.0.2.1')
  a.inflight = 2
  t.assert.strictEqual(b.mayAsk(a), false)
  b.answered(a, 0)
  t.assert.strictEqual(b.mayAsk(a), true)
  b.reset(a, 0)
  b.leave(a, 0)
  t.assert.strictEqual(b.size, 1, 'a query in flight and a reset not yet forgiven')
  b.answered(a, 0)
  t.assert.strictEqual(b.size, 1, 'the reset not yet forgiven')
  b.sweep(1000)
  t.assert.strictEqual(b.size, 0)
})
