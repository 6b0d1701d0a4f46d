// The packed trigger table against a Map doing the same sets and deletes: lookups by suffix, growth,
// deletion with the slots after it shifted back (wrapping round the end), and the arena compacted.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { NO_CODE, TriggerTable } from './trigger-table.js'

/** A small deterministic generator (the same run every time). */
function random(seed: number): () => number {
  let s = seed
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff
    return s / 0x80000000
  }
}

test('sets, deletes and lookups agree with a Map through growth, wrap-round deletions and compaction', () => {
  const table = new TriggerTable()
  const model = new Map<string, number>()
  const next = random(7)
  const keyOf = (wild: boolean, key: string): string => `${wild ? '*' : '='}${key}`
  const names = Array.from({ length: 6000 }, (_, i) => `n${i}.${'x'.repeat(i % 40)}.example`)
  for (let round = 0; round < 60_000; round++) {
    const name = names[Math.floor(next() * names.length)]!
    const wild = next() < 0.3
    if (next() < 0.4) {
      assert.equal(table.delete(name, wild), model.delete(keyOf(wild, name)))
    } else {
      const code = Math.floor(next() * 6)
      table.set(name, wild, code)
      model.set(keyOf(wild, name), code)
    }
  }
  assert.equal(table.count, model.size)
  for (const name of names)
    for (const wild of [false, true]) assert.equal(table.get(name, 0, wild), model.get(keyOf(wild, name)) ?? NO_CODE)
  table.trim()
  for (const name of names.slice(0, 500)) {
    // A key as the suffix of a longer query name, the way a wildcard walk asks.
    const query = `www.${name}`
    assert.equal(table.get(query, 4, true), model.get(keyOf(true, name)) ?? NO_CODE)
    assert.equal(table.get(query, 4, false), model.get(keyOf(false, name)) ?? NO_CODE)
  }
})

test('the empty key (the `*` owner) and a key that is a prefix of another are told apart', () => {
  const table = new TriggerTable()
  table.set('', true, 1)
  table.set('example', false, 2)
  table.set('example', true, 3)
  assert.equal(table.get('www.example', 'www.example'.length, true), 1)
  assert.equal(table.get('www.example', 4, false), 2)
  assert.equal(table.get('www.example', 4, true), 3)
  assert.equal(table.get('www.example', 0, false), NO_CODE)
  assert.equal(table.get('examplex', 0, false), NO_CODE)
  assert.ok(table.delete('', true))
  assert.equal(table.get('x', 1, true), NO_CODE)
  assert.equal(table.get('example', 0, true), 3)
})
