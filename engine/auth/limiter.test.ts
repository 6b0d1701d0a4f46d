import { test, type TestContext } from 'node:test'
import { SlidingWindowLimiter, retryAfterSeconds } from './limiter.js'

test('refuses the event past the limit and reports when the oldest one leaves the window', (t: TestContext) => {
  const l = new SlidingWindowLimiter(3, 60_000)
  t.assert.ok(l.take('a', 0).allowed)
  t.assert.ok(l.take('a', 10_000).allowed)
  t.assert.ok(l.take('a', 20_000).allowed)
  const d = l.take('a', 30_000)
  t.assert.strictEqual(d.allowed, false)
  t.assert.strictEqual(d.retryAfterMs, 30_000)
  t.assert.strictEqual(l.take('a', 59_999).allowed, false)
  t.assert.ok(l.take('a', 60_000).allowed)
  t.assert.ok(l.take('b', 60_000).allowed)
})

test('forgets keys whose events have all left the window', (t: TestContext) => {
  const l = new SlidingWindowLimiter(2, 1000)
  l.take('a', 0)
  l.take('b', 900)
  l.sweep(1000)
  t.assert.strictEqual(l.size, 1)
})

test('rounds Retry-After up to whole seconds, never below one', (t: TestContext) => {
  t.assert.strictEqual(retryAfterSeconds(1), 1)
  t.assert.strictEqual(retryAfterSeconds(1000), 1)
  t.assert.strictEqual(retryAfterSeconds(1001), 2)
})
