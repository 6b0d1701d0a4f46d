// The dns.1 cases (./dns.1.case.ts) on the node:dgram UDP I/O.
import { forIo } from './testing/harness.js'
import { dnsSuite1 } from './dns.1.case.js'

forIo('dgram', dnsSuite1)
