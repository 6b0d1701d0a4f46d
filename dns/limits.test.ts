// Abuse of the DNS port itself: the per-client rate limit (off by default), the ANY amplification
// guard, and the UDP receive buffer from the config.
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { loadUdpAddon } from '../engine/udp/index.js'
import { addUser, ask, framed, query, rcode, server, tcpClient, udpAsk, udpSilent, world } from './testing/harness.js'

const ANY = 'ANY' as dnsPacket.RecordType // dns-packet knows ANY (255); its typings leave it out

test('rate-limit: past the per-client rate a client gets REFUSED; another client is not affected; off by default', async (t: TestContext) => {
  const w = await world(t)
  const s = await server(t, w, { listen: ['127.0.0.1:0'], proxy: { 'rate-limit': 5 } })
  const answers = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => rcode(await ask(s.port, `r${i}.example`, 'A')))
  )
  const refused = answers.filter((r) => r === 'REFUSED').length
  t.assert.ok(
    refused >= 20 && answers.filter((r) => r === 'NOERROR').length >= 5,
    `30 queries at once with rate-limit 5: ${refused} REFUSED`
  )
  t.assert.strictEqual(
    rcode(await ask(s.port, 'other.example', 'A', { from: '127.0.0.2' })),
    'NOERROR',
    'another address has its own budget'
  )
  const off = await server(t, w, { listen: ['127.0.0.1:0'] })
  const all = await Promise.all(
    Array.from({ length: 50 }, async (_, i) => rcode(await ask(off.port, `o${i}.example`, 'A')))
  )
  t.assert.ok(
    all.every((r) => r === 'NOERROR'),
    'no limit by default'
  )
})

test('rate-limit-action drop: over the rate nothing comes back; an IPv4 prefix counts as one client', async (t: TestContext) => {
  const w = await world(t)
  await addUser(w.store, { name: 'u', ip: ['127.0.0.1'] })
  const s = await server(t, w, { proxy: { 'rate-limit': 3, 'rate-limit-action': 'drop', 'rate-limit-prefix-v4': 24 } })
  for (let i = 0; i < 3; i++)
    t.assert.strictEqual(
      rcode(await ask(s.port, `d${i}.example`, 'A', { from: i % 2 === 0 ? '127.0.0.1' : '127.0.0.3' })),
      'NOERROR'
    )
  t.assert.ok(await udpSilent(s.port, query('more.example', 'A')), 'dropped, not answered')
  t.assert.ok(await udpSilent(s.port, query('more.example', 'A'), 300), 'the same /24 shares the budget')
})

test('ANY over UDP gets an empty answer with TC set, no larger than the query; over TCP it is forwarded', async (t: TestContext) => {
  const w = await world(t)
  const s = await server(t, w)
  const q = query('amplify.example', ANY, { id: 9, edns: {} })
  const msg = await udpAsk(s.port, q)
  const p = dnsPacket.decode(msg)
  t.assert.deepStrictEqual([p.id, p.flag_tc, p.answers?.length, rcode(p)], [9, true, 0, 'NOERROR'])
  t.assert.ok(msg.length <= q.length + 11, `answer ${msg.length} bytes for a ${q.length}-byte query`)
  t.assert.ok(!w.stub.seen.includes('amplify.example/ANY'), 'not forwarded over UDP')
  const c = await tcpClient(t, s.port)
  c.send(framed(query('amplify.example', ANY, { id: 10 })))
  const tcp = dnsPacket.decode(await c.next())
  t.assert.deepStrictEqual([tcp.id, tcp.flag_tc, rcode(tcp)], [10, false, 'NOERROR'])
  t.assert.ok(w.stub.seen.includes('amplify.example/ANY'), 'forwarded over TCP')
  const fwd = await server(t, w, { proxy: { 'any-over-udp': 'forward' } })
  t.assert.strictEqual(dnsPacket.decode(await udpAsk(fwd.port, query('fwd.example', ANY))).flag_tc, false)
})

for (const io of ['dgram', 'native'] as const) {
  const addon = io === 'native' ? loadUdpAddon() : undefined
  // Without the addon the native case skips, except in CI, which builds it.
  const skip = addon instanceof Error && (process.env.CI ?? '') === '' ? addon.message : false
  test(`the UDP receive buffer comes from proxy.udp-receive-buffer (${io} I/O)`, { skip }, async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w, { proxy: { io, 'udp-receive-buffer': 1048576 } })
    // Linux doubles the request (bookkeeping) and caps it at net.core.rmem_max.
    t.assert.ok(
      s.listeners[0]!.udpReceiveBuffer >= Math.min(1048576, 212992 * 2),
      `receive buffer ${s.listeners[0]!.udpReceiveBuffer}`
    )
    const small = await server(t, w, { proxy: { io, 'udp-receive-buffer': 65536 } })
    t.assert.ok(small.listeners[0]!.udpReceiveBuffer < s.listeners[0]!.udpReceiveBuffer)
    t.assert.ok(small.listeners[0]!.udpReceiveBuffer >= 65536, `receive buffer ${small.listeners[0]!.udpReceiveBuffer}`)
  })
}
