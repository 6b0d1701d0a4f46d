import { test, type TestContext } from 'node:test'
import { GenerationCache } from './generations.js'

test('two generations: at most the size given, a key used in the older generation survives the next turnover', (t: TestContext) => {
  const c = new GenerationCache<number>(4)           // generations of 2
  c.set('a', 1); c.set('b', 2)
  c.set('c', 3)                                       // a, b become the older generation
  t.assert.strictEqual(c.size, 3)
  t.assert.strictEqual(c.get('a'), 1)                 // found in the older: moves back to the recent one
  c.set('d', 4)                                       // recent (c, a) full: it becomes older, b is dropped
  t.assert.strictEqual(c.get('b'), undefined)
  t.assert.strictEqual(c.get('a'), 1)
  t.assert.ok(c.size <= 4)
  c.clear()
  t.assert.strictEqual(c.size, 0)
  t.assert.strictEqual(c.get('a'), undefined)
})
