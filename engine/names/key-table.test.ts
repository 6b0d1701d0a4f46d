import { test, type TestContext } from 'node:test'
import { ABSENT, KeyTable } from './key-table.js'

test('two generations: at most the size given, a key used in the older generation survives the next turnover', (t: TestContext) => {
  const c = new KeyTable(4) // generations of 2
  c.set('a', 1)
  c.set('b', 2)
  c.set('c', 3) // a, b become the older generation
  t.assert.strictEqual(c.size, 3)
  t.assert.strictEqual(c.get('a'), 1) // found in the older: moves back to the recent one
  c.set('d', 4) // recent (c, a) full: it becomes older, b is dropped
  t.assert.strictEqual(c.get('b'), ABSENT)
  t.assert.strictEqual(c.get('a'), 1)
  t.assert.ok(c.size <= 4)
  c.clear()
  t.assert.strictEqual(c.size, 0)
  t.assert.strictEqual(c.get('a'), ABSENT)
})

test('a table of many keys answers each with its own value, and a new value replaces the old one', (t: TestContext) => {
  const c = new KeyTable(200_000)
  const names = Array.from({ length: 100_000 }, (_, i) => `host${i}.example${i % 97}.com`)
  names.forEach((n, i) => c.set(n, i))
  t.assert.strictEqual(c.size, names.length)
  let wrong = 0
  names.forEach((n, i) => {
    if (c.get(n) !== i) wrong++
  })
  t.assert.strictEqual(wrong, 0)
  // Same length, same characters in another order, a prefix: all absent.
  t.assert.strictEqual(c.get('host0.example0.moc'), ABSENT)
  t.assert.strictEqual(c.get('host0.example0.co'), ABSENT)
  t.assert.strictEqual(c.get(''), ABSENT)
  c.set('', 7) // the empty key is never stored
  t.assert.strictEqual(c.get(''), ABSENT)
  t.assert.strictEqual(c.size, names.length)
  c.set('host7.example7.com', 42)
  t.assert.strictEqual(c.get('host7.example7.com'), 42)
  t.assert.strictEqual(c.size, names.length)
})

test('keys are compared byte for byte: escaped and latin1 names are kept apart, and a key outside latin1 is not cached', (t: TestContext) => {
  const c = new KeyTable(64)
  c.set('a\\.b.com', 1)
  c.set('a.b.com', 2)
  c.set('\u00e9t\u00e9.fr', 3)
  t.assert.strictEqual(c.get('a\\.b.com'), 1)
  t.assert.strictEqual(c.get('a.b.com'), 2)
  t.assert.strictEqual(c.get('\u00e9t\u00e9.fr'), 3)
  c.set('\u0436.ru', 4) // above U+00FF: not stored, so never confused
  t.assert.strictEqual(c.get('\u0436.ru'), ABSENT)
  t.assert.strictEqual(c.get('6.ru'), ABSENT) // U+0436's low byte is '6'
})

test('a generation is full when its key bytes are, and a key longer than a generation is not stored', (t: TestContext) => {
  const c = new KeyTable(4) // generations of 2 keys, 96 bytes of key text
  const long = 'x'.repeat(60)
  c.set(`a${long}`, 1)
  c.set(`b${long}`, 2) // the bytes of the first generation are spent
  t.assert.strictEqual(c.get(`a${long}`), 1)
  t.assert.strictEqual(c.get(`b${long}`), 2)
  c.set('y'.repeat(500), 3)
  t.assert.strictEqual(c.get('y'.repeat(500)), ABSENT)
  t.assert.ok(c.size <= 4)
})
