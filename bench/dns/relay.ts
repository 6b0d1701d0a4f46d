// The ceiling for the DNS benchmark: a bare Node UDP relay (dgram in, ID rewrite, dgram out, back).
// No parsing, no policy, no checks: what `node:dgram` alone costs per forwarded query.
// Usage: node dist/bench/dns/relay.js LISTEN_PORT UPSTREAM_PORT
import { createSocket, type RemoteInfo } from 'node:dgram'

const listenPort = Number(process.argv[2] ?? 5392)
const upstreamPort = Number(process.argv[3] ?? 5390)
const front = createSocket('udp4')
const back = createSocket('udp4')
const clients: Array<{ id: number; port: number; address: string } | undefined> = new Array(65536)
let next = 0
front.on('message', (msg: Buffer, r: RemoteInfo) => {
  const id = next++ & 0xffff
  clients[id] = { id: msg.readUInt16BE(0), port: r.port, address: r.address }
  msg.writeUInt16BE(id, 0)
  back.send(msg, upstreamPort, '127.0.0.1')
})
back.on('message', (msg: Buffer) => {
  const c = clients[msg.readUInt16BE(0)]
  if (c === undefined) return
  msg.writeUInt16BE(c.id, 0)
  front.send(msg, c.port, c.address)
})
back.bind(0, '127.0.0.1')
front.bind(listenPort, '127.0.0.1', () => {
  process.send?.('ready')
})
process.on('SIGTERM', () => process.exit(0))
