import { test, type TestContext } from 'node:test'
import { documentedErrorCodes, readDoc } from '../engine/testing/docs.js'
import { COLLECTOR_ERRORS } from './errors.js'

test('docs/collector.md lists every collector error code with its status, and only those', (t: TestContext) => {
  const sorted = (o: Record<string, number>): Array<[string, number]> => Object.entries(o).sort()
  t.assert.deepStrictEqual(
    sorted(documentedErrorCodes(readDoc('collector.md'), 'COLLECTOR_')),
    sorted(COLLECTOR_ERRORS)
  )
})
