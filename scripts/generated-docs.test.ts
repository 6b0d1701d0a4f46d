import { test, type TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderConfigDoc } from './config-doc.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

test('docs/config.md is what the schema generates (run npm run gen:docs after a schema change)', (t: TestContext) => {
  t.assert.strictEqual(readFileSync(`${root}docs/config.md`, 'utf8'), renderConfigDoc())
})
