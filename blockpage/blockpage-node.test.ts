import { runBlockPageSuite } from './blockpage.case.js'

runBlockPageSuite('node')
