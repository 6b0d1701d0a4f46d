import { runBlockPageSuite } from './blockpage.case.js'

runBlockPageSuite('uws')
