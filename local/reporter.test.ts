import { test, type TestContext } from 'node:test'
import { Reporter } from './reporter.js'

// docs/local.md, "Reporting": after the n-th failure in a row the next attempt comes after
// min(interval, base × 2^(n−1)), base = min(5 s, interval / 4), with ±10 % jitter.
const DEFAULT_INTERVAL_MS = 300_000

test('retries after 5, 10, 20, 40, 80, 160 s, then every interval, with the default 300 s interval', (t: TestContext) => {
  // random = 0.5 is the middle of the jitter range: the nominal delay exactly.
  const delays = Array.from({ length: 9 }, (_, i) => Reporter.delayAfter(i + 1, DEFAULT_INTERVAL_MS, 0.5))
  t.assert.deepStrictEqual(delays, [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000])
})

test('after a success the next report is one interval later, without jitter', (t: TestContext) => {
  for (const random of [0, 0.5, 0.999])
    t.assert.strictEqual(Reporter.delayAfter(0, DEFAULT_INTERVAL_MS, random), DEFAULT_INTERVAL_MS)
})

test('the jitter stays within ±10 % of the nominal delay and reaches both ends', (t: TestContext) => {
  const nominal = [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000]
  nominal.forEach((n, i) => {
    t.assert.strictEqual(
      Reporter.delayAfter(i + 1, DEFAULT_INTERVAL_MS, 0),
      Math.round(n * 0.9),
      `failure ${i + 1}, random 0`
    )
    // Math.random() is below 1, so 1.1 × nominal is approached, never passed.
    t.assert.strictEqual(
      Reporter.delayAfter(i + 1, DEFAULT_INTERVAL_MS, 1 - Number.EPSILON),
      Math.round(n * 1.1),
      `failure ${i + 1}, random ~1`
    )
  })
  // With the real Math.random (the default argument): every draw within the bounds, and not all equal.
  const seen = new Set<number>()
  for (let i = 0; i < 2000; i++) {
    const d = Reporter.delayAfter(3, DEFAULT_INTERVAL_MS)
    t.assert.ok(d >= 18_000 && d <= 22_000, `${d} outside 20 s ± 10 %`)
    seen.add(d)
  }
  t.assert.ok(seen.size > 100, `only ${seen.size} distinct delays: no jitter?`)
})

test('a short interval scales the base down to a quarter of it and caps at the interval', (t: TestContext) => {
  // interval 8 s → base 2 s: 2, 4, 8, 8 s.
  t.assert.deepStrictEqual(
    [1, 2, 3, 4].map((n) => Reporter.delayAfter(n, 8000, 0.5)),
    [2000, 4000, 8000, 8000]
  )
  // interval 1 s (the schema's minimum) → base 250 ms.
  t.assert.deepStrictEqual(
    [1, 2, 3, 4].map((n) => Reporter.delayAfter(n, 1000, 0.5)),
    [250, 500, 1000, 1000]
  )
})

test('a long run of failures stays at the interval (no overflow to Infinity or NaN)', (t: TestContext) => {
  for (const n of [31, 100, 1075, Number.MAX_SAFE_INTEGER]) {
    t.assert.strictEqual(Reporter.delayAfter(n, DEFAULT_INTERVAL_MS, 0.5), DEFAULT_INTERVAL_MS, `failure ${n}`)
  }
})
