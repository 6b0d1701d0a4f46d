// The TCP front on real sockets: a client that pipelines a thousand queries in one write must not
// hold the event loop while they are answered (every UDP client would wait behind it).
import { test, type TestContext } from 'node:test'
import { connect } from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { silentLogger } from '../engine/log/index.js'
import { releasedPort } from '../engine/testing/ports.js'
import { FrameReader, frame } from '../engine/wire/index.js'
import { until } from '../engine/testing/wait.js'
import { TcpFront, TCP_FRAMES_PER_TURN } from './tcp-front.js'
import { idleSweepTicks } from './tcp-slots.js'

test('pipelined bursts on several connections are taken at most TCP_FRAMES_PER_TURN frames per event-loop turn between them, and every frame is answered in order', async (t: TestContext) => {
  // An event-loop turn counter: one tick per check phase.
  let turn = 0
  let ticking = true
  const tick = (): void => {
    turn++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  t.after(() => {
    ticking = false
  })

  const perTurn = new Map<number, number>()
  const front = new TcpFront({
    maxConnections: 10,
    idleTimeoutMs: 10_000,
    messageTimeoutMs: 10_000,
    maxFrame: 4096,
    logger: silentLogger(),
    onQuery: (msg, peer) => {
      perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1)
      peer.channel.send(peer, msg, msg.length, true) // answered at once, as a blocked name is
    }
  })
  t.after(() => front.close())
  const port = await releasedPort()
  await front.listen('127.0.0.1', port, 4)

  // One connection with a burst of 1,500 frames, then eight with 300 each: between them they may
  // take no more than the budget in any turn.
  const bursts = [1500, 300, 300, 300, 300, 300, 300, 300, 300]
  const answered = await Promise.all(bursts.map(async (n, c) => await pipeline(t, port, c, n)))
  for (const [c, ids] of answered.entries()) {
    t.assert.deepStrictEqual(
      ids,
      Array.from({ length: bursts[c]! }, (_, i) => i),
      `connection ${c}`
    )
  }
  const most = Math.max(...perTurn.values())
  t.assert.ok(most <= TCP_FRAMES_PER_TURN, `${most} frames in one turn`)
  const total = bursts.reduce((a, b) => a + b, 0)
  t.assert.ok(perTurn.size >= Math.ceil(total / TCP_FRAMES_PER_TURN), `${perTurn.size} turns`)
})

/** A front on a free port that echoes every query, frames of at most 512 bytes, idle deadline 60 s. */
async function echoFront(t: TestContext, messageTimeoutMs: number): Promise<{ front: TcpFront; port: number }> {
  const front = new TcpFront({
    maxConnections: 10,
    idleTimeoutMs: 60_000,
    messageTimeoutMs,
    maxFrame: 512,
    logger: silentLogger(),
    onQuery: (msg, peer) => {
      peer.channel.send(peer, msg, msg.length, true)
    }
  })
  t.after(() => front.close())
  const port = await releasedPort()
  await front.listen('127.0.0.1', port, 4)
  return { front, port }
}

test('a frame over the size cap closes the connection even when a later turn reaches it', async (t: TestContext) => {
  // Deadlines far away: only the size cap may close this connection within the test.
  const { port } = await echoFront(t, 60_000)
  const sock = connect({ host: '127.0.0.1', port })
  t.after(() => sock.destroy())
  await once(sock, 'connect')
  const frames: Buffer[] = []
  // More frames than one turn takes, then a length prefix over the cap.
  for (let i = 0; i < 4 * TCP_FRAMES_PER_TURN; i++) frames.push(frame(Buffer.alloc(12)))
  frames.push(Buffer.from([0x10, 0x00]))
  let bytes = 0
  sock.on('data', (d: Buffer) => {
    bytes += d.length
  })
  sock.write(Buffer.concat(frames))
  const closed = await Promise.race([once(sock, 'close').then(() => true), sleep(5000, false, { ref: false })])
  t.assert.ok(closed, 'the connection was closed at the oversized frame')
  t.assert.strictEqual(bytes, 4 * TCP_FRAMES_PER_TURN * 14, 'every frame before the oversized one was answered')
})

test('the whole table is walked for idle deadlines at a tenth of the idle timeout, at most once a second', (t: TestContext) => {
  t.assert.strictEqual(idleSweepTicks(250, 10_000), 4) // the default idle timeout: once a second
  t.assert.strictEqual(idleSweepTicks(250, 600_000), 4)
  t.assert.strictEqual(idleSweepTicks(250, 5_000), 2) // a tenth: 500 ms
  t.assert.strictEqual(idleSweepTicks(250, 1_000), 1) // a shortened timeout (full table): every tick
  t.assert.strictEqual(idleSweepTicks(50, 100), 1)
})

test('an unfinished message is closed at the message deadline, also when it follows an answered one; an idle connection stays', async (t: TestContext) => {
  const { front, port } = await echoFront(t, 300) // the idle deadline far away: only the message deadline may close here
  const open = async (): Promise<{ sock: ReturnType<typeof connect>; closed: () => boolean }> => {
    const sock = connect({ host: '127.0.0.1', port })
    t.after(() => sock.destroy())
    let closed = false
    sock.on('close', () => (closed = true))
    sock.on('error', () => {})
    await once(sock, 'connect')
    sock.write(frame(Buffer.alloc(12))) // one complete query, answered
    await once(sock, 'data')
    return { sock, closed: () => closed }
  }
  const idle = await open()
  const slow = await open()
  const fresh = connect({ host: '127.0.0.1', port })
  t.after(() => fresh.destroy())
  let freshClosed = false
  fresh.on('close', () => (freshClosed = true))
  fresh.on('error', () => {})
  await once(fresh, 'connect')
  slow.sock.write(Buffer.from([0x00, 0x0c, 0x01])) // the next frame's first bytes, then nothing
  fresh.write(Buffer.from([0x00])) // half a length prefix as the first bytes
  await until('both unfinished messages closed', () => slow.closed() && freshClosed, 20_000)
  await sleep(300)
  t.assert.ok(!idle.closed(), 'the idle connection is still open')
  t.assert.strictEqual(front.connectionCount, 1)
})

// Connection `c` writes `n` frames (IDs 0..n-1, connection number in the second word) in one write
// and resolves with the IDs of the answers in the order they came.
async function pipeline(t: TestContext, port: number, c: number, n: number): Promise<number[]> {
  const burst: Buffer[] = []
  for (let i = 0; i < n; i++) {
    const msg = Buffer.alloc(12)
    msg.writeUInt16BE(i, 0)
    msg.writeUInt16BE(c, 4)
    burst.push(frame(msg))
  }
  const sock = connect({ host: '127.0.0.1', port })
  t.after(() => sock.destroy())
  await once(sock, 'connect')
  const ids: number[] = []
  const reader = new FrameReader(4096)
  const done = new Promise<number[]>((resolve) => {
    sock.on('data', (chunk: Buffer) => {
      reader.push(chunk)
      for (let m = reader.read(); m !== null; m = reader.read()) ids.push(m.readUInt16BE(0))
      if (ids.length >= n) resolve(ids)
    })
  })
  sock.write(Buffer.concat(burst)) // one write: on loopback it arrives in one or two reads
  return await done
}
