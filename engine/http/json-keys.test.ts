import { test, type TestContext } from 'node:test'
import { findDuplicateKey } from './json-keys.js'

test('a name repeated within one object is found with its path and where the repeat starts', (t: TestContext) => {
  t.assert.deepStrictEqual(findDuplicateKey('{"filter":[1],"filter":[2]}'), { field: 'filter', position: 14 })
  t.assert.deepStrictEqual(findDuplicateKey('[{"a":1},{"a":1,"b":{"c":0,"c":1}}]'), { field: '[1].b.c', position: 27 })
  t.assert.deepStrictEqual(findDuplicateKey('{"x":{"y":[0,{"z":1,"z":2}]}}'), { field: 'x.y[1].z', position: 20 })
  t.assert.deepStrictEqual(
    findDuplicateKey('{"a\\u0062":1,"ab":2}'),
    { field: 'ab', position: 13 },
    'names compare after unescaping'
  )
})

test('the same name in different objects, as a value, or inside a string is not a repeat', (t: TestContext) => {
  for (const text of [
    '{}',
    '[]',
    '"a"',
    '{"a":"a","b":{"a":1}}',
    '[{"a":1},{"a":2}]',
    '{"a":"\\",\\"a\\":","b":["a","a"]}',
    '{"a":{},"b":{}}'
  ]) {
    t.assert.strictEqual(findDuplicateKey(text), undefined, text)
  }
})
