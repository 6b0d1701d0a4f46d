// The dns.3 cases (./dns.3.case.ts) on the native batched UDP I/O.
import { forIo } from './testing/harness.js'
import { dnsSuite3 } from './dns.3.case.js'

forIo('native', dnsSuite3)
