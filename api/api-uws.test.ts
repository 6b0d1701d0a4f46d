/** The management API suite on uWebSockets.js (the implementation production uses where it loads). */
import { runApiSuite } from './api.case.js'

runApiSuite('uws')
