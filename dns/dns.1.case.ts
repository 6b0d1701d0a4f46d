// The filtering DNS server over UDP: answers of every kind, EDE, safe search, safe video, statistics.
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../engine/categories/index.js'
import { memoryQueryLogSink } from '../engine/querylog/index.js'
import {
  BLOCK_V4,
  BLOCK_V6,
  addUser,
  ask,
  edeOf,
  firstA,
  query,
  rcode,
  server,
  udpAsk,
  world
} from './testing/harness.js'

/** Registers the dns.1 cases; dns.1.native.test.ts and dns.1.dgram.test.ts run them on each UDP I/O path. */
export function dnsSuite1(): void {
  const cats = { 'casino.example': [CATEGORY.GAMBLING], 'news.example': [60] }

  async function blockingWorld(t: TestContext, stub = {}): Promise<Awaited<ReturnType<typeof world>>> {
    const w = await world(t, { cats, stub })
    await addUser(
      w.store,
      { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] },
      { black: ['ads.example'] }
    )
    return w
  }

  test('forwards an unlisted name and relays the upstream answer with the client ID', async (t: TestContext) => {
    const w = await blockingWorld(t, { records: { 'www.example.org': { a: ['203.0.113.7'] } } })
    const s = await server(t, w)
    const answer = await ask(s.port, 'www.example.org', 'A', { id: 0x4242 })
    t.assert.strictEqual(answer.id, 0x4242)
    t.assert.strictEqual(firstA(answer), '203.0.113.7')
    t.assert.ok(w.stub.seen.includes('www.example.org/A'))
  })

  test('answers a blocked A query with the IPv4 block-page address and the configured TTL', async (t: TestContext) => {
    const w = await blockingWorld(t)
    const s = await server(t, w, { proxy: { ttl: 42 } })
    const answer = await ask(s.port, 'www.casino.example', 'A', { id: 7 })
    t.assert.strictEqual(answer.id, 7)
    t.assert.strictEqual(rcode(answer), 'NOERROR')
    t.assert.strictEqual(firstA(answer), BLOCK_V4)
    t.assert.strictEqual((answer.answers?.[0] as { ttl?: number } | undefined)?.ttl, 42)
    t.assert.strictEqual(w.stub.seen.length, 0)
  })

  test('answers a blocked AAAA query with the IPv6 block-page address', async (t: TestContext) => {
    const w = await blockingWorld(t)
    const s = await server(t, w)
    t.assert.strictEqual(firstA(await ask(s.port, 'casino.example', 'AAAA')), BLOCK_V6)
  })

  test('answers NODATA to a blocked AAAA query when no IPv6 block-page address is configured', async (t: TestContext) => {
    const w = await blockingWorld(t)
    const s = await server(t, w, { blockpage: [BLOCK_V4] })
    const answer = await ask(s.port, 'casino.example', 'AAAA')
    t.assert.strictEqual(rcode(answer), 'NOERROR')
    t.assert.strictEqual(answer.answers?.length, 0)
    t.assert.strictEqual(firstA(await ask(s.port, 'casino.example', 'A')), BLOCK_V4)
  })

  test('answers NODATA to every other type of a blocked name (HTTPS, SVCB, MX, TXT)', async (t: TestContext) => {
    const w = await blockingWorld(t)
    const s = await server(t, w)
    for (const type of [65, 64, 15, 16]) {
      const msg = query('casino.example', 'A')
      msg.writeUInt16BE(type, msg.length - 4)
      const answer = dnsPacket.decode(await udpAsk(s.port, msg))
      t.assert.strictEqual(rcode(answer), 'NOERROR', `type ${type}`)
      t.assert.strictEqual(answer.answers?.length, 0, `type ${type}`)
    }
    t.assert.strictEqual(w.stub.seen.length, 0)
  })

  test('adds Extended DNS Error 15 Blocked for a list block and 17 Filtered for a category, only with EDNS', async (t: TestContext) => {
    const w = await blockingWorld(t)
    const s = await server(t, w)
    const edns = { edns: { udpPayloadSize: 1232 } }
    t.assert.strictEqual(edeOf(await udpAsk(s.port, query('x.ads.example', 'A', edns))), 15)
    t.assert.strictEqual(edeOf(await udpAsk(s.port, query('casino.example', 'A', edns))), 17)
    const plain = dnsPacket.decode(await udpAsk(s.port, query('casino.example', 'A')))
    t.assert.strictEqual(plain.additionals?.length ?? 0, 0)
  })

  test('relays NXDOMAIN from upstream and records it in statistics', async (t: TestContext) => {
    const w = await blockingWorld(t, { nxdomain: ['gone.example'] })
    const sink = memoryQueryLogSink()
    const s = await server(t, w, { querylog: sink })
    const answer = await ask(s.port, 'www.gone.example', 'A')
    t.assert.strictEqual(rcode(answer), 'NXDOMAIN')
    const rec = sink.records.at(-1)
    t.assert.strictEqual(rec?.name, 'www.gone.example')
    t.assert.strictEqual(rec?.nxdomain, true)
    t.assert.strictEqual(rec?.rcode, 3)
    t.assert.strictEqual(rec?.user, 'alice')
    t.assert.strictEqual(rec?.address, '127.0.0.1')
  })

  test('writes one statistics record per query with the blocked name, reason and categories', async (t: TestContext) => {
    const w = await blockingWorld(t)
    const sink = memoryQueryLogSink()
    const s = await server(t, w, { querylog: sink })
    await ask(s.port, 'www.casino.example', 'A')
    await ask(s.port, 'x.ads.example', 'A')
    await ask(s.port, 'news.example', 'A')
    t.assert.strictEqual(sink.records.length, 3)
    const [a, b, c] = sink.records
    t.assert.deepStrictEqual(
      { ...a, time: 0 },
      {
        time: 0,
        address: '127.0.0.1',
        user: 'alice',
        name: 'www.casino.example',
        qtype: 1,
        blockedName: 'casino.example',
        reason: 'category',
        cats: [CATEGORY.GAMBLING],
        blockedCats: [CATEGORY.GAMBLING],
        nxdomain: false,
        rcode: 0,
        clientId: null,
        source: ''
      }
    )
    t.assert.ok(Math.abs(a!.time - Date.now()) < 10_000)
    t.assert.strictEqual(b?.reason, 'user-blacklist')
    t.assert.strictEqual(b?.blockedName, 'ads.example')
    t.assert.strictEqual(c?.reason, 'none')
    t.assert.deepStrictEqual(c?.cats, [60])
    t.assert.strictEqual(c?.blockedName, '')
  })

  test('answers a search engine with the block-page address when safe search is on', async (t: TestContext) => {
    const w = await world(t)
    await addUser(w.store, { name: 'kid', ip: ['127.0.0.1'], safesearch: 'on' })
    const s = await server(t, w)
    t.assert.strictEqual(firstA(await ask(s.port, 'www.google.com', 'A')), BLOCK_V4)
    t.assert.strictEqual(firstA(await ask(s.port, 'www.google.co.uk', 'A')), BLOCK_V4)
    t.assert.strictEqual(edeOf(await udpAsk(s.port, query('www.bing.com', 'A', { edns: {} }))), 17)
    // Not a search host: forwarded.
    t.assert.strictEqual(firstA(await ask(s.port, 'mail.google.com', 'A')), '198.51.100.10')
  })

  test('answers YouTube as a CNAME to restrict.youtube.com with its addresses from upstream when safe video is on', async (t: TestContext) => {
    const w = await world(t, {
      stub: { records: { 'restrict.youtube.com': { a: ['216.239.38.120'], aaaa: ['2001:4860:4802:32::78'] } } }
    })
    await addUser(w.store, { name: 'kid', ip: ['127.0.0.1'], safeyoutube: 'on' })
    const s = await server(t, w)
    const a = await ask(s.port, 'www.youtube.com', 'A', { id: 99 })
    t.assert.strictEqual(a.id, 99)
    t.assert.strictEqual(a.questions?.[0]?.name, 'www.youtube.com')
    t.assert.deepStrictEqual(
      a.answers?.map((r) => [r.type, r.name, (r as { data: string }).data]),
      [
        ['CNAME', 'www.youtube.com', 'restrict.youtube.com'],
        ['A', 'restrict.youtube.com', '216.239.38.120']
      ]
    )
    const aaaa = await ask(s.port, 'm.youtube.com', 'AAAA')
    t.assert.deepStrictEqual(
      aaaa.answers?.map((r) => (r as { data: string }).data),
      ['restrict.youtube.com', '2001:4860:4802:32::78']
    )
    t.assert.ok(w.stub.seen.includes('restrict.youtube.com/A'))
    t.assert.ok(!w.stub.seen.some((x) => x.startsWith('www.youtube.com')))
    // Any other type: the CNAME alone, nothing asked upstream.
    const before = w.stub.seen.length
    const https = await ask(s.port, 'www.youtube.com', 'TXT')
    t.assert.deepStrictEqual(
      https.answers?.map((r) => r.type),
      ['CNAME']
    )
    t.assert.strictEqual(w.stub.seen.length, before)
  })

  test('answers over IPv6 and finds the user by the IPv6 source address', async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'v6', ip: ['::1'], filter: [CATEGORY.GAMBLING] })
    const s = await server(t, w, { listen: ['[::1]:0', '127.0.0.1:0'] })
    t.assert.strictEqual(s.listeners.length, 2)
    const blocked = await ask(s.listeners[0]!.port, 'casino.example', 'AAAA', { host: '::1' })
    t.assert.strictEqual(firstA(blocked), BLOCK_V6)
    // The same name from 127.0.0.1 (anonymous, no filter) is forwarded.
    t.assert.strictEqual(firstA(await ask(s.listeners[1]!.port, 'casino.example', 'A')), '198.51.100.10')
  })
}
