import { test } from 'node:test'
import { needsUws } from '../engine/testing/uws.js'
import { runBlockPageSuite } from './blockpage.case.js'

const { skip } = needsUws()
if (skip === false) runBlockPageSuite('uws')
else test('runBlockPageSuite on uws', { skip }, () => {})
