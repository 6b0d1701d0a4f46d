import { test, type TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderConfigDoc } from './config-doc.js'
import { renderUiTypes, UI_TYPES_FILE } from './ui-types.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

test('docs/config.md is what the schema generates (run npm run gen:docs after a schema change)', (t: TestContext) => {
  t.assert.strictEqual(readFileSync(`${root}docs/config.md`, 'utf8'), renderConfigDoc())
})

test("the console's API types are what docs/openapi.yaml generates, and the console declares none by hand (npm run gen:docs)", async (t: TestContext) => {
  t.assert.strictEqual(readFileSync(`${root}${UI_TYPES_FILE}`, 'utf8'), await renderUiTypes())
  // Every answer type the console uses is a name for a schema of the generated file, not a copy of it.
  const api = readFileSync(`${root}ui/src/api.ts`, 'utf8')
  t.assert.deepStrictEqual(api.match(/^export interface \w+/gm) ?? [], [])
  for (const m of api.matchAll(/^export type (\w+) = (.*)$/gm))
    t.assert.match(m[2]!, /^Schemas\['\w+'\]$/, `ui/src/api.ts: ${m[1]!}`)
})
