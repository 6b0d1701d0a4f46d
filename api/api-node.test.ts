/** The management API suite on the node:http fallback. */
import { runApiSuite } from './api.case.js'

runApiSuite('node')
