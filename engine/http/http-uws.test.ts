import { test } from 'node:test'
import { needsUws } from '../testing/uws.js'
import { runHttpSuite } from '../testing/http-adapter.case.js'

const { skip } = needsUws()
if (skip === false) runHttpSuite('uws')
else test('runHttpSuite on uws', { skip }, () => {})
