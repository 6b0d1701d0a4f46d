import { test, type TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ENGINE_ERROR_CODES, EngineError, isEngineError } from './errors.js'

const doc = readFileSync(fileURLToPath(new URL('../../docs/errors.md', import.meta.url)), 'utf8')

test('docs/errors.md lists every engine error code, and only those', (t: TestContext) => {
  const documented = new Set([...doc.matchAll(/`(ENGINE_[A-Z_]+)`/g)].map((m) => m[1]))
  t.assert.deepStrictEqual([...documented].sort(), [...ENGINE_ERROR_CODES].sort())
})

test('an engine error is recognised by its code, also after crossing a boundary as a plain object', (t: TestContext) => {
  t.assert.ok(isEngineError(new EngineError('ENGINE_LISTEN', 'x')))
  const copy = Object.assign(new Error('x'), { code: 'ENGINE_LISTEN' })
  t.assert.ok(isEngineError(copy))
  t.assert.ok(!isEngineError(new Error('x')))
})
