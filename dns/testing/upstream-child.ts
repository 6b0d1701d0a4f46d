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
import { loadUdpAddon, openBatchUdpSocket, type BatchUdpSocket } from '../../engine/udp/index.js'

if (process.send === undefined) {
  process.stderr.write('usage: node upstream-child.js (forked, with an IPC channel)\n')
  process.exit(2)
}
const send = process.send.bind(process)

/**
 * Writes the answer to the query at `msg[start, start + len)` into `out` at `at`: its question and,
 * for A, one A record 198.51.100.10. Returns the answer's length, or 0 when the query is unreadable.
 * `out` has room for the query plus 16 bytes.
 */
function answerInto(msg: Buffer, start: number, len: number, out: Buffer, at: number): number {
  if (len < 12) return 0
  const end = start + len
  let i = start + 12
  while (i < end && msg[i] !== 0) {
    if ((msg[i]! & 0xc0) !== 0) return 0
    i += msg[i]! + 1
  }
  const qEnd = i + 5
  if (qEnd > end) return 0
  const isA = msg.readUInt16BE(i + 1) === 1
  const qLen = qEnd - start
  msg.copy(out, at, start, qEnd)
  out[at + 2] = 0x80 | (msg[start + 2]! & 0x01)
  out[at + 3] = 0x80
  out.writeUInt16BE(1, at + 4)
  out.writeUInt16BE(isA ? 1 : 0, at + 6)
  out.writeUInt32BE(0, at + 8)
  if (isA) out.set(A_RECORD, at + qLen)
  return qLen + (isA ? 16 : 0)
}
const A_RECORD = [0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 51, 100, 10]

/** The answer to `msg` in a Buffer of its own; null when unreadable. */
function rawAnswer(msg: Buffer): Buffer | null {
  const out = Buffer.alloc(msg.length + 16)
  const n = answerInto(msg, 0, msg.length, out, 0)
  return n === 0 ? null : out.subarray(0, n)
}

/**
 * UDP on the batched addon when it is built: the fixture then costs a few µs per answer instead of
 * dgram's 20, and allocates nothing, so on a 2-core machine it takes less CPU from the server under
 * test. dgram otherwise.
 */
async function bindUdp(): Promise<{ port: number; close: () => void }> {
  const addon = loadUdpAddon()
  if (!(addon instanceof Error)) {
    const sock: BatchUdpSocket = openBatchUdpSocket({
      family: 4,
      host: '127.0.0.1',
      port: 0,
      batch: 64,
      slot: 4096,
      onBatch: (count) => {
        for (let i = 0; i < count; i++) {
          const len = sock.rxInfo[2 * i]!
          if (len < 0) continue
          const at = sock.nextSlot()
          const n = answerInto(sock.rxBuf, i * sock.slot, len, sock.txBuf, at)
          if (n === 0 || n > sock.slot) continue
          sock.txAddr.set(sock.rxAddr.subarray(16 * i, 16 * i + 4), 16 * sock.txCount)
          sock.commit(n, sock.rxInfo[2 * i + 1]!)
        }
      }
    })
    return {
      port: sock.port,
      close: () => {
        sock.close()
      }
    }
  }
  const udp = createSocket('udp4')
  udp.on('message', (msg, rinfo) => {
    const out = rawAnswer(msg)
    if (out !== null) udp.send(out, rinfo.port, rinfo.address)
  })
  udp.bind(0, '127.0.0.1')
  await once(udp, 'listening')
  return {
    port: udp.address().port,
    close: () => {
      udp.close()
    }
  }
}

for (let attempt = 0; ; attempt++) {
  const udp = await bindUdp()
  const port = udp.port
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
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject)
      tcp.listen(port, '127.0.0.1', resolve)
    })
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
