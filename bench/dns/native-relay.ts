// The ceiling of the native I/O path: a bare relay on the batched UDP addon (engine/udp), no
// parsing, no policy, no checks: recvmmsg a batch, rewrite IDs, sendmmsg upstream, and back.
// Usage: node dist/bench/dns/native-relay.js LISTEN_PORT UPSTREAM_PORT
import { openBatchUdpSocket, type BatchUdpSocket } from '../../engine/udp/index.js'

const listenPort = Number(process.argv[2] ?? 5399)
const upstreamPort = Number(process.argv[3] ?? 5390)
const ids = new Uint16Array(65536)
const ports = new Uint16Array(65536)
const addrs = new Uint8Array(65536 * 4)
let next = 0
let front: BatchUdpSocket | null = null
let back: BatchUdpSocket | null = null
front = openBatchUdpSocket({
  family: 4,
  host: '127.0.0.1',
  port: listenPort,
  reusePort: true,
  batch: 64,
  slot: 4096,
  onBatch(n) {
    const f = front!
    const b = back!
    for (let i = 0; i < n; i++) {
      const len = f.rxInfo[2 * i]!
      if (len < 12) continue
      const off = i * f.slot
      const id = next++ & 0xffff
      ids[id] = f.rxBuf.readUInt16BE(off)
      ports[id] = f.rxInfo[2 * i + 1]!
      addrs.set(f.rxAddr.subarray(16 * i, 16 * i + 4), 4 * id)
      const o = b.nextSlot()
      f.rxBuf.copy(b.txBuf, o, off, off + len)
      b.txBuf.writeUInt16BE(id, o)
      b.commit(len, 0)
    }
  }
})
back = openBatchUdpSocket({
  family: 4,
  host: '127.0.0.1',
  port: 0,
  connect: { host: '127.0.0.1', port: upstreamPort },
  batch: 64,
  slot: 4096,
  onBatch(n) {
    const f = front
    const b = back!
    for (let i = 0; i < n; i++) {
      const len = b.rxInfo[2 * i]!
      if (len < 12) continue
      const off = i * b.slot
      const id = b.rxBuf.readUInt16BE(off)
      const o = f.nextSlot()
      b.rxBuf.copy(f.txBuf, o, off, off + len)
      f.txBuf.writeUInt16BE(ids[id]!, o)
      f.txAddr.set(addrs.subarray(4 * id, 4 * id + 4), 16 * f.txCount)
      f.commit(len, ports[id]!)
    }
  }
})
process.on('SIGTERM', () => process.exit(0))
