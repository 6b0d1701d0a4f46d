import { runHttpSuite } from '../testing/http-adapter.case.js'

runHttpSuite('node')
