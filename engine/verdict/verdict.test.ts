import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadTaxonomy, CATEGORY } from '../categories/index.js'
import { nonExistingVerdict, toAsciiJson, verdictOf } from './index.js'

const conf = fileURLToPath(new URL('../../../conf/', import.meta.url))

test('a verdict is bad when any of its categories is bad, with names in the taxonomy language', (t: TestContext) => {
  const en = loadTaxonomy(conf, 'en')
  const v = verdictOf([CATEGORY.SOCIAL_NETWORKS, CATEGORY.MALWARE], en)
  t.assert.deepStrictEqual(v.category, [40, 10])
  t.assert.strictEqual(v.bad, true)
  t.assert.deepStrictEqual(v.category_name, [en.name(40), en.name(10)])
  t.assert.strictEqual(verdictOf([CATEGORY.SOCIAL_NETWORKS], en).bad, false)
})

test('a non-existing domain is category 0, not bad, named Non-Existing Domain in English', (t: TestContext) => {
  t.assert.deepStrictEqual(nonExistingVerdict(loadTaxonomy(conf, 'en')), {
    category: [0],
    bad: false,
    category_name: ['Non-Existing Domain']
  })
})

test('Russian names are written as \\u escapes and parse back to the same strings', (t: TestContext) => {
  const ru = loadTaxonomy(conf, 'ru')
  const v = verdictOf([CATEGORY.SOCIAL_NETWORKS], ru)
  const text = toAsciiJson(v)
  t.assert.match(text, /^[\x20-\x7e]+$/)
  t.assert.match(text, /\\u04[0-9a-f]{2}/)
  t.assert.deepStrictEqual(JSON.parse(text), v)
  t.assert.strictEqual(toAsciiJson({ s: 'a😀b' }), '{"s":"a\\ud83d\\ude00b"}')
})
