import { runHttpSuite } from './http.case.js'

runHttpSuite('uws')
