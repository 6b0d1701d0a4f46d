// The UDP size cases (./udp-size.case.ts) on the node:dgram UDP I/O.
import { forIo } from './testing/harness.js'
import { udpSizeSuite } from './udp-size.case.js'

forIo('dgram', udpSizeSuite)
