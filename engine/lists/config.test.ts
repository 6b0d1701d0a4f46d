// The `lists` section: what the schema cannot say is refused with a line naming the key; defaults filled.
import { test, type TestContext } from 'node:test'
import { parseConfig } from '../features.js'
import { configSources } from './config.js'

function refusal(yaml: string): string {
  try {
    parseConfig(yaml, '/etc/filterd/test.yaml')
  } catch (err) {
    return (err as Error).message
  }
  return ''
}

const source = (extra: string): string =>
  `lists:\n  sources:\n    - id: a\n      url: http://x.example/l\n      format: hosts\n${extra}`

test('lists.sources: a category exactly with target category, ids unique, formats and URLs checked', (t: TestContext) => {
  t.assert.match(
    refusal(source('      target: category\n')),
    /test\.yaml: lists\.sources\[0\]\.category: target category needs/
  )
  t.assert.match(
    refusal(source('      target: blacklist\n      category: 3\n')),
    /lists\.sources\[0\]\.category: a category goes with target category/
  )
  const twice =
    source('      target: blacklist\n') +
    '    - id: a\n      url: http://y.example/\n      format: rpz\n      target: whitelist\n'
  t.assert.match(refusal(twice), /lists\.sources\[1\]\.id: "a" is used by an earlier source/)
  t.assert.match(
    refusal(source('      target: blacklist\n').replace('hosts', 'csv')),
    /lists\.sources\/0\/format|lists\.sources\[0\]\.format/
  )
  t.assert.match(refusal(source('      target: blacklist\n').replace('http://', 'ftp://')), /url/)
})

test('lists: defaults, and a source read with enabled defaulting to true', (t: TestContext) => {
  const c = parseConfig(source('      target: category\n      category: 3\n      interval: 600\n'), '/x.yaml')
  t.assert.strictEqual(c.lists.refresh, true)
  t.assert.strictEqual(c.lists.interval, 86400)
  t.assert.strictEqual(c.lists.jitter, 0.1)
  t.assert.deepStrictEqual(configSources(c.lists.sources), [
    {
      id: 'a',
      url: 'http://x.example/l',
      format: 'hosts',
      target: 'category',
      category: 3,
      interval: 600,
      enabled: true
    }
  ])
})
