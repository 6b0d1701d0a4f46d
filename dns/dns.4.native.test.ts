// The dns.4 cases (./dns.4.case.ts) on the native batched UDP I/O.
import { forIo } from './testing/harness.js'
import { dnsSuite4 } from './dns.4.case.js'

forIo('native', dnsSuite4)
