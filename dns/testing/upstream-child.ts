/**
 * The fuzz test's upstream, in a process of its own (`node upstream-child.js`, forked with an IPC
 * channel): a raw responder on UDP and TCP (one port) that answers any query it can read with its
 * question and, for A, one A record FWD (198.51.100.10). It sends `{ port }` once it listens.
 *
 * It runs apart from the fuzzer because half of the latency probe's queries are forwarded: answered
 * from the fuzzer's own busy event loop, their latency measured the fuzzer as much as the server.
 * dns-packet would cost more than the server under test for every forwarded fuzz packet, hence raw.
 */
import { createSocket } from 'node:dgram'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { FrameReader, frame } from '../../engine/wire/index.js'

if (process.send === undefined) {
  process.stderr.write('usage: node upstream-child.js (forked, with an IPC channel)\n')
  process.exit(2)
}
const send = process.send.bind(process)

/** The answer to `msg`: its question and, for A, one A record 198.51.100.10; null when unreadable. */
function rawAnswer (msg: Buffer): Buffer | null {
  if (msg.length < 12) return null
  let i = 12
  while (i < msg.length && msg[i] !== 0) {
    if ((msg[i]! & 0xc0) !== 0) return null
    i += msg[i]! + 1
  }
  const qEnd = i + 5
  if (qEnd > msg.length) return null
  const isA = msg.readUInt16BE(i + 1) === 1
  const out = Buffer.alloc(qEnd + (isA ? 16 : 0))
  msg.copy(out, 0, 0, qEnd)
  out[2] = 0x80 | (msg[2]! & 0x01); out[3] = 0x80
  out.writeUInt16BE(1, 4); out.writeUInt16BE(isA ? 1 : 0, 6); out.writeUInt32BE(0, 8)
  if (isA) out.set([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 51, 100, 10], qEnd)
  return out
}

for (let attempt = 0; ; attempt++) {
  const udp = createSocket('udp4')
  udp.on('message', (msg, rinfo) => {
    const out = rawAnswer(msg)
    if (out !== null) udp.send(out, rinfo.port, rinfo.address)
  })
  udp.bind(0, '127.0.0.1')
  await once(udp, 'listening')
  const port = udp.address().port
  const tcp = createServer((c) => {
    c.on('error', () => {})
    const reader = new FrameReader(65535)
    c.on('data', (chunk: Buffer) => {
      reader.push(chunk)
      for (let m = reader.read(); m !== null; m = reader.read()) {
        const out = rawAnswer(m)
        if (out !== null) c.write(frame(out, out.length))
      }
    })
  })
  try {
    await new Promise<void>((resolve, reject) => { tcp.once('error', reject); tcp.listen(port, '127.0.0.1', resolve) })
  } catch (err) {
    udp.close()
    if (attempt < 20) continue
    throw err
  }
  send({ port })
  // Exits with its parent: the IPC channel closes when the fuzzer ends.
  process.on('disconnect', () => process.exit(0))
  break
}
