import { test, type TestContext } from 'node:test'
import { documentedErrorCodes, readDoc } from '../engine/testing/docs.js'
import { CATAPI_ERRORS } from './errors.js'

test('docs/catapi.md lists every categorization API error code with its status, and only those', (t: TestContext) => {
  const sorted = (o: Record<string, number>): Array<[string, number]> => Object.entries(o).sort()
  t.assert.deepStrictEqual(sorted(documentedErrorCodes(readDoc('catapi.md'), 'CATAPI_')), sorted(CATAPI_ERRORS))
})
