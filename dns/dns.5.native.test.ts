// The dns.5 cases (./dns.5.case.ts) on the native batched UDP I/O.
import { forIo } from './testing/harness.js'
import { dnsSuite5 } from './dns.5.case.js'

forIo('native', dnsSuite5)
