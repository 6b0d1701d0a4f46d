import { test } from 'node:test'
import { needsUws } from '../engine/testing/uws.js'
/** The management API suite on uWebSockets.js (the implementation production uses where it loads). */
import { runApiSuite } from './api.case.js'

const { skip } = needsUws()
if (skip === false) runApiSuite('uws')
else test('runApiSuite on uws', { skip }, () => {})
