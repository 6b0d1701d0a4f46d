// TCP: RFC 7766 framing, pipelining, split frames, limits.
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { connect } from 'node:net'
import { once } from 'node:events'
import { CATEGORY } from '../engine/categories/index.js'
import { BLOCK_V4, addUser, firstA, framed, query, server, sleep, tcpClient, world } from './testing/harness.js'
import { until } from '../engine/testing/wait.js'

/** Registers the dns.4 cases; dns.4.native.test.ts and dns.4.dgram.test.ts run them on each UDP I/O path. */
export function dnsSuite4(): void {
  test('answers several pipelined queries on one connection, possibly out of order', async (t: TestContext) => {
    const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
    await addUser(w.store, { name: 'a', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const s = await server(t, w)
    const c = await tcpClient(t, s.port)
    // Forwarded first, blocked second: the block answer may come back first.
    c.send(
      Buffer.concat([
        framed(query('www.example.org', 'A', { id: 1 })),
        framed(query('casino.example', 'A', { id: 2 })),
        framed(query('x.example.net', 'AAAA', { id: 3 }))
      ])
    )
    const got = new Map<number, dnsPacket.DecodedPacket>()
    for (let i = 0; i < 3; i++) {
      const p = dnsPacket.decode(await c.next())
      got.set(p.id ?? -1, p)
    }
    t.assert.strictEqual(firstA(got.get(1)!), '198.51.100.10')
    t.assert.strictEqual(firstA(got.get(2)!), BLOCK_V4)
    t.assert.strictEqual(firstA(got.get(3)!), '2001:db8::10')
  })

  test('reassembles frames split across writes, even inside the length prefix', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w)
    const c = await tcpClient(t, s.port)
    const f = framed(query('split.example', 'A', { id: 77 }))
    c.socket.setNoDelay(true)
    c.send(f.subarray(0, 1))
    await sleep(20)
    c.send(f.subarray(1, 9))
    await sleep(20)
    c.send(f.subarray(9))
    const p = dnsPacket.decode(await c.next())
    t.assert.strictEqual(p.id, 77)
    t.assert.strictEqual(firstA(p), '198.51.100.10')
  })

  test('closes an idle connection after tcp-idle-timeout', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w, { proxy: { 'tcp-idle-timeout': 150 } })
    const c = await tcpClient(t, s.port)
    c.send(framed(query('a.example', 'A')))
    await c.next()
    const started = Date.now()
    await c.closed
    t.assert.ok(Date.now() - started >= 100)
  })

  test('closes a connection that announces a frame larger than the cap and keeps serving others', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w, { tcpMaxFrame: 512 })
    const c = await tcpClient(t, s.port)
    c.send(Buffer.from([0x10, 0x00, 1, 2, 3])) // announces 4096 bytes
    await c.closed
    const d = await tcpClient(t, s.port)
    d.send(framed(query('after.example', 'A')))
    t.assert.strictEqual(firstA(dnsPacket.decode(await d.next())), '198.51.100.10')
  })

  test('a full table (tcp-max-connections) closes its oldest idle connection for a new one; when every connection waits for answers, the new one is refused', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w, { proxy: { 'tcp-max-connections': 2, 'upstream-timeout': 20_000 } })
    const a = await tcpClient(t, s.port)
    await sleep(20)
    const b = await tcpClient(t, s.port)
    await sleep(20)
    // Full, both idle: the oldest (a) makes room.
    const c = await tcpClient(t, s.port)
    await a.closed
    c.send(framed(query('newcomer.example', 'A', { id: 8 })))
    t.assert.strictEqual(dnsPacket.decode(await c.next()).id, 8)
    // Both holders wait for a silent upstream: nobody is idle, the newcomer is closed on accept.
    w.stub.silent = true
    b.send(framed(query('wait1.example', 'A', { id: 9 })))
    c.send(framed(query('wait2.example', 'A', { id: 10 })))
    await until(
      'both queries reached the upstream',
      () => w.stub.seen.includes('wait2.example/A') && w.stub.seen.includes('wait1.example/A'),
      10_000
    )
    const extra = connect({ host: '127.0.0.1', port: s.port })
    t.after(() => extra.destroy())
    extra.on('error', () => {})
    await once(extra, 'close')
    t.assert.ok(!b.socket.destroyed && !c.socket.destroyed, 'the busy connections stay')
  })

  test('one address takes at most tcp-max-per-source connections; another address still gets in', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w, { proxy: { 'tcp-max-per-source': 3 } })
    for (let i = 0; i < 3; i++) await tcpClient(t, s.port, '127.0.0.1', '127.0.0.2')
    const extra = connect({ host: '127.0.0.1', port: s.port, localAddress: '127.0.0.2' })
    t.after(() => extra.destroy())
    extra.on('error', () => {})
    await once(extra, 'close')
    const other = await tcpClient(t, s.port, '127.0.0.1', '127.0.0.3')
    other.send(framed(query('other.example', 'A', { id: 11 })))
    t.assert.strictEqual(dnsPacket.decode(await other.next()).id, 11)
  })

  test('answers a malformed query over TCP with FORMERR and keeps the connection', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w)
    const c = await tcpClient(t, s.port)
    const bad = query('x.example', 'A', { id: 9 })
    bad.writeUInt16BE(2, 4)
    c.send(framed(bad))
    t.assert.strictEqual((await c.next()).readUInt16BE(2) & 0xf, 1)
    c.send(framed(query('y.example', 'A', { id: 10 })))
    t.assert.strictEqual(dnsPacket.decode(await c.next()).id, 10)
  })
}
