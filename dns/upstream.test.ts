/*
 * Forwarder.reconfigure: the resolver list swapped live (config reload) without
 * dropping a query in flight, keeping what it knows of the resolvers that stay. Forwarder.withdraw:
 * a query whose client went away leaves the pending table, and its late answer is dropped.
 */
import { test, type TestContext } from 'node:test'
import { createSocket, type RemoteInfo } from 'node:dgram'
import { once } from 'node:events'
import dnsPacket from 'dns-packet'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { Peer, type PeerChannel } from './peer.js'
import { Forwarder, PendingQuery, type QueryOrigin, type UpstreamAnswerHandler } from './upstream.js'
import { query } from './testing/harness.js'

/** A resolver that holds every query until `release()`, then answers it with A 192.0.2.77. */
async function holdingResolver(t: TestContext): Promise<{ port: number; held: number; release: () => void }> {
  const sock = createSocket('udp4')
  const held: Array<[Buffer, RemoteInfo]> = []
  sock.on('message', (msg, rinfo) => held.push([msg, rinfo]))
  sock.bind(0, '127.0.0.1')
  await once(sock, 'listening')
  t.after(() => sock.close())
  return {
    port: sock.address().port,
    get held() {
      return held.length
    },
    release() {
      for (const [msg, rinfo] of held.splice(0)) {
        const q = dnsPacket.decode(msg)
        const out = dnsPacket.encode({
          id: q.id,
          type: 'response',
          flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
          questions: q.questions,
          answers: [{ type: 'A', name: q.questions![0]!.name, ttl: 60, data: '192.0.2.77' }]
        })
        sock.send(out, rinfo.port, rinfo.address)
      }
    }
  }
}

const channel: PeerChannel = { isStream: false, send: () => {}, skip: () => {}, own: (m) => m }

/** A client's origin on a loopback peer, its answer handed to `onAnswer`. */
function origin(onAnswer: UpstreamAnswerHandler): QueryOrigin {
  return {
    peer: new Peer(channel, '127.0.0.1', 1),
    record: null,
    started: performance.now(),
    original: null,
    target: '',
    ttlCap: -1,
    onAnswer
  }
}

/** Forwards `name` and resolves with the answer's first A record ('' for none, 'SERVFAIL' for null). */
function forward(f: Forwarder, name: string, id: number): Promise<string> {
  return new Promise((resolve) => {
    const o = origin((_o, p, response) => {
      if (response === null) {
        resolve('SERVFAIL')
        return
      }
      const a = dnsPacket.decode(response)
      if (a.id !== p.clientId) throw new Error('the client ID is restored')
      resolve((a.answers?.[0] as { data?: string } | undefined)?.data ?? '')
    })
    f.forwardUdp(new PendingQuery(query(name, 'A', { id }), id, o))
  })
}

test('reconfigure swaps the resolvers live: a query in flight on a removed resolver still gets its answer, new ones go to the new list', async (t: TestContext) => {
  const old = await holdingResolver(t)
  const fresh = await startStubResolver({ a: '203.0.113.5' })
  t.after(() => fresh.close())
  const f = await Forwarder.create({ resolvers: [{ host: '127.0.0.1', port: old.port, family: 4 }], timeoutMs: 10_000 })
  t.after(() => f.close())
  const inFlight = forward(f, 'before.example', 11)
  while (old.held === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  await f.reconfigure([{ host: '127.0.0.1', port: fresh.port, family: 4 }])
  t.assert.deepStrictEqual(
    f.resolverSnapshots().map((r) => r.resolver),
    [`127.0.0.1:${fresh.port}`]
  )
  t.assert.strictEqual(await forward(f, 'after.example', 12), '203.0.113.5', 'a new query goes to the new resolver')
  old.release()
  t.assert.strictEqual(await inFlight, '192.0.2.77', 'the query in flight on the removed resolver got its answer')
  t.assert.deepStrictEqual(fresh.seen, ['after.example/A'])
})

test('reconfigure keeps the state and counters of a resolver in both lists, in the new order', async (t: TestContext) => {
  const a = await startStubResolver({ a: '203.0.113.1' })
  const b = await startStubResolver({ a: '203.0.113.2' })
  t.after(async () => {
    await a.close()
    await b.close()
  })
  const addr = (port: number): { host: string; port: number; family: 4 } => ({ host: '127.0.0.1', port, family: 4 })
  const f = await Forwarder.create({ resolvers: [addr(a.port)], timeoutMs: 5000 })
  t.after(() => f.close())
  t.assert.strictEqual(await forward(f, 'one.example', 1), '203.0.113.1')
  await f.reconfigure([addr(b.port), addr(a.port)])
  const snaps = f.resolverSnapshots()
  t.assert.deepStrictEqual(
    snaps.map((r) => [r.resolver, r.queries]),
    [
      [`127.0.0.1:${b.port}`, 0],
      [`127.0.0.1:${a.port}`, 1]
    ]
  )
  t.assert.strictEqual(await forward(f, 'two.example', 2), '203.0.113.2', 'the first of the new list takes the queries')
  await t.assert.rejects(f.reconfigure([]), /names no resolver/)
  t.assert.strictEqual(f.resolverSnapshots().length, 2, 'a refused list changes nothing')
})

test('withdraw takes a query whose client went away out of the pending table: its late answer is dropped, the others are relayed', async (t: TestContext) => {
  const r = await holdingResolver(t)
  const f = await Forwarder.create({ resolvers: [{ host: '127.0.0.1', port: r.port, family: 4 }], timeoutMs: 10_000 })
  t.after(() => f.close())
  const answered: number[] = []
  const pending = [21, 22, 23].map((id) => {
    const o = origin((_o, p) => answered.push(p.clientId))
    const p = new PendingQuery(query(`q${id}.example`, 'A', { id }), id, o)
    f.forwardUdp(p)
    return p
  })
  while (r.held < 3) await new Promise((resolve) => setTimeout(resolve, 10))
  t.assert.strictEqual(f.pending, 3)
  t.assert.strictEqual(f.withdraw(pending[0]!), true)
  t.assert.strictEqual(f.withdraw(pending[2]!), true)
  t.assert.strictEqual(f.withdraw(pending[2]!), false, 'withdrawn once')
  t.assert.strictEqual(f.pending, 1)
  r.release()
  while (answered.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  // The two late answers came in the same burst as the kept one's: wait one more moment for any stray.
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.assert.deepStrictEqual(answered, [22])
  t.assert.strictEqual(f.pending, 0)
  t.assert.strictEqual(f.withdraw(pending[1]!), false, 'an answered query is not withdrawn')
})
