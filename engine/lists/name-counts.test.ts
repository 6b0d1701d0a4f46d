// The subscriptions' name counts: per hash and kind, growing past many rehashes and emptied again by
// backward-shift removal, with every count still found afterwards (the table a process keeps instead
// of the names).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { BLACK, CATEGORY, NameCounts, WHITE } from './name-counts.js'

test('counts are kept per hash and kind, across growth, and gone when they reach 0', () => {
  const t = new NameCounts()
  // Hashes that share their low bits, so probe runs are long and removal has to shift.
  const hashes = Array.from({ length: 5000 }, (_, i) => (i << 12) | 7)
  for (const h of hashes) t.add(h, BLACK, 1)
  for (const h of hashes.slice(0, 100)) t.add(h, WHITE, 1)
  assert.equal(t.size, 5000)
  assert.equal(t.total(BLACK), 5000)
  assert.equal(t.total(WHITE), 100)
  assert.ok(hashes.every((h) => t.has(h, BLACK)))
  assert.ok(!t.has(hashes[200]!, WHITE) && t.has(hashes[50]!, WHITE))
  assert.ok(!t.has(123456789, BLACK), 'a hash never counted')
  // Remove every other one: the rest must still be found (a wrong shift would strand them).
  for (let i = 0; i < hashes.length; i += 2) t.add(hashes[i]!, BLACK, -1)
  assert.equal(t.size, 2500 + 50, 'the first 100 keep their white count')
  for (let i = 0; i < hashes.length; i++) assert.equal(t.has(hashes[i]!, BLACK), i % 2 === 1, `hash ${i}`)
  for (let i = 0; i < 100; i++) assert.ok(t.has(hashes[i]!, WHITE), `white ${i}`)
  // A second entry of the same name and kind: one removal leaves it counted.
  t.add(hashes[1]!, BLACK, 1)
  t.add(hashes[1]!, BLACK, -1)
  assert.ok(t.has(hashes[1]!, BLACK))
  t.add(42, CATEGORY, -1)
  assert.ok(!t.has(42, CATEGORY), 'removing what was never counted counts nothing')
  assert.equal(t.total(CATEGORY), 0)
  t.clear()
  assert.equal(t.size, 0)
  assert.ok(!t.has(hashes[1]!, BLACK))
})
