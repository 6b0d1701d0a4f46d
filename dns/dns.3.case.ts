// Forwarding (failover, SERVFAIL, truncation, TCP) and the wire rejections.
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import {
  edeOf,
  firstA,
  query,
  rawQuery,
  rcode,
  server,
  udpAsk,
  udpSilent,
  world,
  ask,
  tcpClient,
  framed,
  sleep
} from './testing/harness.js'

/** Registers the dns.3 cases; dns.3.native.test.ts and dns.3.dgram.test.ts run them on each UDP I/O path. */
export function dnsSuite3(): void {
  test('answers SERVFAIL when the upstream does not answer in upstream-timeout', async (t: TestContext) => {
    const w = await world(t)
    w.stub.silent = true
    const s = await server(t, w, { proxy: { 'upstream-timeout': 200 } })
    const started = Date.now()
    const msg = await udpAsk(s.port, query('www.example.org', 'A', { id: 5, edns: {} }))
    const answer = dnsPacket.decode(msg)
    t.assert.strictEqual(answer.id, 5)
    t.assert.strictEqual(rcode(answer), 'SERVFAIL')
    t.assert.strictEqual(edeOf(msg), 22)
    t.assert.ok(Date.now() - started >= 150)
  })

  test('one dead resolver of two costs no query a SERVFAIL: a try without an answer goes on to the next resolver inside the budget', async (t: TestContext) => {
    const w = await world(t)
    w.stub.silent = true // the first resolver swallows every query
    const second = await startStubResolver({ a: '203.0.113.2' })
    t.after(() => second.close())
    const s = await server(t, w, {
      forward: [`127.0.0.1:${w.stub.port}`, `127.0.0.1:${second.port}`],
      proxy: { 'upstream-timeout': 1000 }
    })
    // Waves of concurrent queries over about 2 s: the first wave meets the dead resolver, later
    // ones must go straight to the live one (no return to the dead one with users' queries).
    const rcodes = new Map<string, number>()
    for (let wave = 0; wave < 8; wave++) {
      const answers = await Promise.all(
        Array.from({ length: 25 }, async (_, i) => await ask(s.port, `q${wave}-${i}.example`, 'A'))
      )
      for (const a of answers) {
        const k = `${rcode(a) ?? '?'} ${firstA(a) ?? '-'}`
        rcodes.set(k, (rcodes.get(k) ?? 0) + 1)
      }
      await sleep(150)
    }
    const usersAtDead = w.stub.seen.filter((q) => q.startsWith('q')).length
    t.diagnostic(
      `one of two resolvers dead: ${JSON.stringify([...rcodes])} of 200 queries; users' queries that reached the dead one: ${usersAtDead}`
    )
    t.assert.deepStrictEqual([...rcodes], [['NOERROR 203.0.113.2', 200]])
    t.assert.ok(
      usersAtDead <= 25,
      `users' queries that reached the dead resolver: ${usersAtDead}; only the first wave may`
    )
    t.assert.ok(
      w.stub.seen.some((q) => q.endsWith('/NS')),
      'the dead resolver is probed in the background'
    )
    // It comes back: a probe answer marks it up, and users' queries go to it again.
    w.stub.silent = false
    await sleep(1500)
    t.assert.strictEqual(firstA(await ask(s.port, 'back.example', 'A')), '198.51.100.10')
  })

  test('every resolver dead: SERVFAIL within upstream-timeout, after trying each one', async (t: TestContext) => {
    const w = await world(t)
    w.stub.silent = true
    const second = await startStubResolver({})
    second.silent = true
    t.after(() => second.close())
    const s = await server(t, w, {
      forward: [`127.0.0.1:${w.stub.port}`, `127.0.0.1:${second.port}`],
      proxy: { 'upstream-timeout': 800 }
    })
    const started = Date.now()
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => await ask(s.port, `dead${i}.example`, 'A'))
    )
    const elapsed = Date.now() - started
    t.diagnostic(`every resolver dead: 20 SERVFAIL after ${elapsed} ms (upstream-timeout 800 ms)`)
    t.assert.ok(answers.every((a) => rcode(a) === 'SERVFAIL'))
    t.assert.ok(elapsed >= 600 && elapsed < 800 + 300, `SERVFAIL after ${elapsed} ms (budget 800 ms)`)
    t.assert.ok(
      w.stub.seen.includes('dead0.example/A') && second.seen.includes('dead0.example/A'),
      'both resolvers were tried'
    )
  })

  test('fails over at once from a resolver whose port is closed (ICMP unreachable), without waiting for the timeout', async (t: TestContext) => {
    const w = await world(t)
    const { createSocket } = await import('node:dgram')
    const gone = createSocket('udp4') // a port that was just free: nothing listens there now
    await new Promise<void>((resolve) => gone.bind(0, '127.0.0.1', resolve))
    const closedPort = gone.address().port
    await new Promise<void>((resolve) => gone.close(resolve))
    const second = await startStubResolver({ a: '203.0.113.2' })
    t.after(() => second.close())
    const s = await server(t, w, {
      forward: [`127.0.0.1:${closedPort}`, `127.0.0.1:${second.port}`],
      proxy: { 'upstream-timeout': 2000 }
    })
    const first = ask(s.port, 'one.example', 'A') // refused upstream; sent again to the second after its try's share
    await sleep(200)
    const started = Date.now()
    t.assert.strictEqual(firstA(await ask(s.port, 'two.example', 'A')), '203.0.113.2')
    t.assert.ok(
      Date.now() - started < 800,
      'the second query went to the live resolver without waiting for a try to time out'
    )
    t.assert.strictEqual(firstA(await first), '203.0.113.2')
  })

  test('accepts an answer only from the resolver address and port the query went to', async (t: TestContext) => {
    const w = await world(t)
    const { createSocket } = await import('node:dgram')
    const resolver = createSocket('udp4')
    const spoofer = createSocket('udp4')
    t.after(() => {
      resolver.close()
      spoofer.close()
    })
    await new Promise<void>((resolve) => spoofer.bind(0, '127.0.0.1', resolve))
    const answer = (p: dnsPacket.DecodedPacket, a: string): Buffer =>
      dnsPacket.encode({
        id: p.id ?? 0,
        type: 'response',
        flags: 0x8180,
        questions: p.questions ?? [],
        answers: [{ name: 'asked.example', type: 'A', data: a }]
      })
    resolver.on('message', (msg, rinfo) => {
      const p = dnsPacket.decode(msg)
      // A forged answer with the right ID and question, from another port, arrives first.
      spoofer.send(answer(p, '198.51.100.66'), rinfo.port, rinfo.address)
      setTimeout(() => resolver.send(answer(p, '203.0.113.7'), rinfo.port, rinfo.address), 50)
    })
    await new Promise<void>((resolve) => resolver.bind(0, '127.0.0.1', resolve))
    const s = await server(t, w, { forward: [`127.0.0.1:${resolver.address().port}`] })
    t.assert.strictEqual(firstA(await ask(s.port, 'asked.example', 'A')), '203.0.113.7')
  })

  test("relays a truncated answer as it is; a TCP client's query goes over UDP, and over TCP once the answer is truncated", async (t: TestContext) => {
    const w = await world(t, {
      stub: { truncate: ['big.example'], records: { 'big.example': { a: ['203.0.113.9'] } } }
    })
    const s = await server(t, w)
    const udp = dnsPacket.decode(await udpAsk(s.port, query('big.example', 'A', { id: 3 })))
    t.assert.strictEqual(udp.flag_tc, true)
    t.assert.strictEqual(udp.id, 3)
    const c = await tcpClient(t, s.port)
    c.send(framed(query('big.example', 'A', { id: 4 })))
    const tcp = dnsPacket.decode(await c.next())
    t.assert.strictEqual(tcp.id, 4)
    t.assert.strictEqual(tcp.flag_tc, false)
    t.assert.strictEqual(firstA(tcp), '203.0.113.9')
    t.assert.deepStrictEqual(w.stub.seenTcp, ['big.example/A'], 'only the truncated answer is asked again over TCP')
    // An answer that fits a datagram: asked over UDP only, however the client came (no TCP
    // handshake with the resolver per pipelined query).
    c.send(framed(query('small.example', 'A', { id: 5 })))
    const small = dnsPacket.decode(await c.next())
    t.assert.strictEqual(small.id, 5)
    t.assert.strictEqual(firstA(small), '198.51.100.10')
    t.assert.ok(w.stub.seen.includes('small.example/A'))
    t.assert.deepStrictEqual(w.stub.seenTcp, ['big.example/A'])
  })

  test('gives each forwarded query a random ID of its own', async (t: TestContext) => {
    const ids: number[] = []
    const w = await world(t)
    const { createSocket } = await import('node:dgram')
    const spy = createSocket('udp4')
    t.after(() => spy.close())
    spy.on('message', (msg, rinfo) => {
      ids.push(msg.readUInt16BE(0))
      const p = dnsPacket.decode(msg)
      spy.send(
        dnsPacket.encode({ id: p.id ?? 0, type: 'response', flags: 0x8180, questions: p.questions ?? [], answers: [] }),
        rinfo.port,
        rinfo.address
      )
    })
    await new Promise<void>((resolve) => spy.bind(0, '127.0.0.1', resolve))
    const s = await server(t, w, { forward: [`127.0.0.1:${spy.address().port}`] })
    for (let i = 0; i < 5; i++) await ask(s.port, `n${i}.example`, 'A', { id: 0x1111 })
    t.assert.strictEqual(ids.length, 5)
    t.assert.ok(new Set(ids).size >= 4, `ids ${ids.join(',')}`)
  })

  test('ignores an upstream answer whose question differs, then times out', async (t: TestContext) => {
    const w = await world(t)
    const { createSocket } = await import('node:dgram')
    const liar = createSocket('udp4')
    t.after(() => liar.close())
    liar.on('message', (msg, rinfo) => {
      const p = dnsPacket.decode(msg)
      liar.send(
        dnsPacket.encode({
          id: p.id ?? 0,
          type: 'response',
          flags: 0x8180,
          questions: [{ name: 'other.example', type: 'A', class: 'IN' }],
          answers: [{ name: 'other.example', type: 'A', data: '6.6.6.6' }]
        }),
        rinfo.port,
        rinfo.address
      )
    })
    await new Promise<void>((resolve) => liar.bind(0, '127.0.0.1', resolve))
    const s = await server(t, w, { forward: [`127.0.0.1:${liar.address().port}`], proxy: { 'upstream-timeout': 150 } })
    t.assert.strictEqual(rcode(await ask(s.port, 'asked.example', 'A')), 'SERVFAIL')
  })

  // RFC 1035 rejections as the trusted resolvers make them; the server keeps answering afterwards.
  test('rejects malformed queries like the trusted resolvers and keeps answering', async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w)
    const ok = query('fine.example', 'A')
    const rc = (b: Buffer): number => b.readUInt16BE(2) & 0xf
    // QR set: dropped.
    const response = Buffer.from(ok)
    response[2] = response[2]! | 0x80
    t.assert.ok(await udpSilent(s.port, response))
    // Too short for a header: dropped.
    t.assert.ok(await udpSilent(s.port, Buffer.from([1, 2, 3])))
    // Opcode other than QUERY: NOTIMP.
    const notify = Buffer.from(ok)
    notify[2] = (notify[2]! & 0x87) | (4 << 3)
    t.assert.strictEqual(rc(await udpAsk(s.port, notify)), 4)
    // QDCOUNT 0 and 2: FORMERR.
    const q0 = Buffer.from(ok)
    q0.writeUInt16BE(0, 4)
    t.assert.strictEqual(rc(await udpAsk(s.port, q0)), 1)
    const q2 = Buffer.from(ok)
    q2.writeUInt16BE(2, 4)
    t.assert.strictEqual(rc(await udpAsk(s.port, q2)), 1)
    // Answer or authority records in a query: FORMERR.
    const an = Buffer.from(ok)
    an.writeUInt16BE(1, 6)
    t.assert.strictEqual(rc(await udpAsk(s.port, an)), 1)
    const ns = Buffer.from(ok)
    ns.writeUInt16BE(1, 8)
    t.assert.strictEqual(rc(await udpAsk(s.port, ns)), 1)
    // A compression pointer in the question: FORMERR.
    const ptr = Buffer.concat([ok.subarray(0, 12), Buffer.from([3, 0x77, 0x77, 0x77, 0xc0, 0x0c, 0, 1, 0, 1])])
    t.assert.strictEqual(rc(await udpAsk(s.port, ptr)), 1)
    // Truncated question and trailing garbage: FORMERR.
    t.assert.strictEqual(rc(await udpAsk(s.port, ok.subarray(0, ok.length - 2))), 1)
    t.assert.strictEqual(rc(await udpAsk(s.port, Buffer.concat([ok, Buffer.from([0])]))), 1)
    // A label longer than 63: FORMERR.
    t.assert.strictEqual(rc(await udpAsk(s.port, rawQuery(['a'.repeat(64), 'example']))), 1)
    // Still answering.
    t.assert.strictEqual(firstA(await ask(s.port, 'fine.example', 'A')), '198.51.100.10')
    t.assert.strictEqual(w.stub.seen.length, 1)
  })
}
