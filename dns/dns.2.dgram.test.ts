// The dns.2 cases (./dns.2.case.ts) on the node:dgram UDP I/O.
import { forIo } from './testing/harness.js'
import { dnsSuite2 } from './dns.2.case.js'

forIo('dgram', dnsSuite2)
