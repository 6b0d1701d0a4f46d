/*
 * Subscriber identity: a query that comes with a client ID (a DoH path, a DoT server name) is
 * judged by the user holding the ID, whatever its address; without one, by the address; an unknown ID is
 * refused with EDE 18 or judged anonymous (`proxy.unknown-client-id`). Tested through the real server's
 * dispatcher (inline and pool) with Peers carrying a client ID on a channel of the test's own, as the
 * encrypted fronts hand theirs over, and the query log and dnstap carry the ID.
 */
import { describe, test, type TestContext } from 'node:test'
import { memoryQueryLogSink } from '../engine/querylog/index.js'
import { until } from '../engine/testing/wait.js'
import { FrameStreamWriter } from '../engine/dnstap/index.js'
import { decodeDnstap } from '../engine/dnstap/testing/decode.js'
import { silentLogger } from '../engine/log/index.js'
import type { QueryLogRecord } from '../engine/querylog/index.js'
import { DnstapTap } from './dnstap-sink.js'
import { addUser, BLOCK_V4, edeOf, firstA, query, rcode, server, world, type World } from './testing/harness.js'
import dnsPacket from 'dns-packet'
import { Peer, type PeerChannel } from './peer.js'
import type { DnsServer } from './server.js'

/** A channel that hands each answer to whoever waits for it (one query in flight per Peer). */
class TestChannel implements PeerChannel {
  readonly isStream = true
  private readonly waiting = new Map<Peer, (answer: Buffer | null) => void>()
  send(peer: Peer, buf: Buffer, len: number): void {
    this.waiting.get(peer)?.(Buffer.from(buf.subarray(0, len)))
  }
  skip(peer: Peer): void {
    this.waiting.get(peer)?.(null)
  }
  own(msg: Buffer): Buffer {
    return Buffer.from(msg)
  }
  async ask(s: DnsServer, name: string, address: string, clientId: string | null): Promise<dnsPacket.DecodedPacket> {
    const peer = new Peer(this, address, 40000, -1, clientId)
    const answer = await new Promise<Buffer | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer for ${name}`)), 10_000)
      this.waiting.set(peer, (a) => {
        clearTimeout(timer)
        resolve(a)
      })
      s.submit(query(name, 'A', { edns: {} }), peer)
    })
    this.waiting.delete(peer)
    if (answer === null) throw new Error(`${name}: dropped`)
    this.last = answer
    return dnsPacket.decode(answer)
  }
  /** The bytes of the last answer. */
  last: Buffer = Buffer.alloc(0)
}

/** alice holds the client ID `kid` and blocks category 3; bob owns 10.9.9.9 and blocks nothing. */
async function setup(t: TestContext): Promise<World> {
  const w = await world(t, { cats: { 'adult.example': [3] }, stub: { a: '203.0.113.9' } })
  await addUser(w.store, { name: 'alice', filter: [3], client_ids: ['kid'] })
  await addUser(w.store, { name: 'bob', ip: ['10.9.9.9'], filter: [] })
  await w.store.write((wr) => {
    wr.putServerDefaults({ filter: [3], safesearch: false, safeyoutube: false, safesearchredirect: '' })
  })
  return w
}

for (const dispatch of ['inline', 'pool'] as const) {
  describe(`client IDs on the ${dispatch} path`, () => {
    test('an ID decides the user whatever the address; without one, the address does; the log names the ID', async (t: TestContext) => {
      const w = await setup(t)
      const log = memoryQueryLogSink()
      const s = await server(t, w, { proxy: { dispatch, workers: 1 }, querylog: log })
      const ch = new TestChannel()
      const byId = await ch.ask(s, 'adult.example', '10.9.9.9', 'KID')
      t.assert.strictEqual(firstA(byId), BLOCK_V4, "alice's filter, from bob's address")
      const byAddress = await ch.ask(s, 'adult.example', '10.9.9.9', null)
      t.assert.strictEqual(firstA(byAddress), '203.0.113.9', "bob's policy: forwarded")
      const anonymous = await ch.ask(s, 'adult.example', '10.1.1.1', null)
      t.assert.strictEqual(firstA(anonymous), BLOCK_V4, 'the server defaults block category 3')
      const records = log.records.map((r) => [r.name, r.address, r.user, r.clientId ?? null, r.reason])
      t.assert.deepStrictEqual(records, [
        ['adult.example', '10.9.9.9', 'alice', 'kid', 'category'],
        ['adult.example', '10.9.9.9', 'bob', null, 'none'],
        ['adult.example', '10.1.1.1', null, null, 'category']
      ])
    })

    test('an unknown ID is REFUSED with EDE 18 and never forwarded (proxy.unknown-client-id: refuse, the default)', async (t: TestContext) => {
      const w = await setup(t)
      const log = memoryQueryLogSink()
      const s = await server(t, w, { proxy: { dispatch, workers: 1 }, querylog: log })
      const ch = new TestChannel()
      const a = await ch.ask(s, 'open.example', '10.9.9.9', 'stranger')
      t.assert.strictEqual(rcode(a), 'REFUSED')
      t.assert.strictEqual(edeOf(ch.last), 18, 'EDE 18 Prohibited')
      t.assert.deepStrictEqual(w.stub.seen, [], 'nothing reached the upstream')
      t.assert.deepStrictEqual(
        log.records.map((r) => [r.user, r.clientId, r.reason, r.rcode]),
        [[null, 'stranger', 'unknown-client-id', 5]]
      )
    })

    test('with proxy.unknown-client-id: anonymous an unknown ID gets the server defaults, not its address owner', async (t: TestContext) => {
      const w = await setup(t)
      const s = await server(t, w, { proxy: { dispatch, workers: 1, 'unknown-client-id': 'anonymous' } })
      const ch = new TestChannel()
      t.assert.strictEqual(firstA(await ch.ask(s, 'adult.example', '10.9.9.9', 'stranger')), BLOCK_V4)
      t.assert.strictEqual(firstA(await ch.ask(s, 'open.example', '10.9.9.9', 'stranger')), '203.0.113.9')
    })
  })
}

test('an API write that gives a user a client ID takes effect for the next query', async (t: TestContext) => {
  const w = await setup(t)
  const s = await server(t, w)
  const ch = new TestChannel()
  t.assert.strictEqual(rcode(await ch.ask(s, 'adult.example', '10.9.9.9', 'tv')), 'REFUSED')
  await w.store.write((wr) => {
    wr.setClientIds('bob', ['tv'])
    wr.putUser({ ...w.store.getUser('bob')!, client_ids: ['tv'] })
  })
  // The server polls the generation on a timer (GENERATION_CHECK_MS): ask until it has moved.
  await until(
    "bob's policy through his new ID",
    async () => firstA(await ch.ask(s, 'adult.example', '10.9.9.9', 'tv')) === '203.0.113.9'
  )
})

test("dnstap: a query's client ID is the Dnstap extra field (client-id=ID); none without one", (t: TestContext) => {
  // A writer never started holds its frames in its chunk: read them back from there.
  const writer = new FrameStreamWriter({
    target: { kind: 'unix', path: '/nonexistent/dnstap.sock' },
    queueBytes: 1 << 20
  })
  const tap = new DnstapTap(writer, 'test', silentLogger())
  const ch = new TestChannel()
  const rec = (clientId: string | null): QueryLogRecord => ({
    time: 1000,
    address: '10.9.9.9',
    user: 'alice',
    name: 'a.example',
    qtype: 1,
    blockedName: '',
    reason: 'none',
    cats: [],
    blockedCats: [],
    nxdomain: false,
    rcode: 0,
    clientId
  })
  const q = query('a.example', 'A')
  tap.write(rec('kid'), q, -1, q, q.length, new Peer(ch, '10.9.9.9', 1, -1, 'kid'))
  tap.write(rec(null), q, -1, q, q.length, new Peer(ch, '10.9.9.9', 1))
  const frames: Buffer[] = []
  for (let off = 0; off < writer.used; off += 4 + writer.chunk.readUInt32BE(off))
    frames.push(writer.chunk.subarray(off + 4, off + 4 + writer.chunk.readUInt32BE(off)))
  t.assert.deepStrictEqual(
    frames.map((f) => [decodeDnstap(f).extra, decodeDnstap(f).identity, decodeDnstap(f).message?.queryPort]),
    [
      ['client-id=kid', 'test', 1],
      [undefined, 'test', 1]
    ]
  )
})
