// The verdict order end to end: users found by source address, lists, status, categories, ECS, live updates.
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../engine/categories/index.js'
import { BLOCK_V4, addUser, ask, firstA, rawOpt, server, sleep, udpAsk, world } from './testing/harness.js'
import dnsPacket from 'dns-packet'
import { query } from './testing/harness.js'

/** Registers the dns.2 cases; dns.2.native.test.ts and dns.2.dgram.test.ts run them on each UDP I/O path. */
export function dnsSuite2(): void {
  const FWD = '198.51.100.10'
  const cats = { 'casino.example': [CATEGORY.GAMBLING], 'porn.example': [CATEGORY.PORNOGRAPHY] }

  test('applies each verdict step in order for users found by their source address', async (t: TestContext) => {
    const w = await world(t, { cats })
    await w.store.write((wr) => {
      wr.putList(null, 'black', ['evil.example', 'kaspersky-labs.com', 'both.example'])
      wr.putList(null, 'white', ['both.example', 'good.example'])
    })
    await addUser(
      w.store,
      { name: 'filtered', ip: ['127.0.0.2'], filter: [CATEGORY.GAMBLING] },
      { white: ['casino.example', 'evil.example'], black: ['mine.example'] }
    )
    await addUser(
      w.store,
      { name: 'off', ip: ['127.0.0.3'], filter: [CATEGORY.GAMBLING], status: 'disabled' },
      { black: ['mine.example'] }
    )
    await addUser(w.store, { name: 'strict', ip: ['127.0.0.4/32'] }, { black: ['-'], white: ['ok.example'] })
    await w.store.write((wr) =>
      wr.putServerDefaults({
        filter: [CATEGORY.PORNOGRAPHY],
        safesearch: false,
        safeyoutube: false,
        safesearchredirect: ''
      })
    )
    const s = await server(t, w)
    const at = async (from: string, name: string): Promise<string | undefined> =>
      firstA(await ask(s.port, name, 'A', { from }))
    // 1. built-in whitelist beats the global blacklist.
    t.assert.strictEqual(await at('127.0.0.2', 'upd.kaspersky-labs.com'), FWD)
    // 2. global whitelist beats the global blacklist, which beats the user's whitelist.
    t.assert.strictEqual(await at('127.0.0.2', 'www.both.example'), FWD)
    t.assert.strictEqual(await at('127.0.0.2', 'www.evil.example'), BLOCK_V4)
    // 4. a disabled user is not filtered (categories, own blacklist) but global lists still apply.
    t.assert.strictEqual(await at('127.0.0.3', 'casino.example'), FWD)
    t.assert.strictEqual(await at('127.0.0.3', 'mine.example'), FWD)
    t.assert.strictEqual(await at('127.0.0.3', 'evil.example'), BLOCK_V4)
    // 5. user whitelist beats categories; user blacklist blocks; `-` blocks all but the whitelist.
    t.assert.strictEqual(await at('127.0.0.2', 'casino.example'), FWD)
    t.assert.strictEqual(await at('127.0.0.2', 'a.mine.example'), BLOCK_V4)
    t.assert.strictEqual(await at('127.0.0.4', 'anything.example'), BLOCK_V4)
    t.assert.strictEqual(await at('127.0.0.4', 'ok.example'), FWD)
    // 8. categories in the user's filter; 3. an address without a user gets the server defaults.
    t.assert.strictEqual(await at('127.0.0.2', 'porn.example'), FWD)
    t.assert.strictEqual(await at('127.0.0.9', 'porn.example'), BLOCK_V4)
    t.assert.strictEqual(await at('127.0.0.9', 'casino.example'), FWD)
  })

  test('a global blacklist holding - blocks everything the global whitelist does not pass', async (t: TestContext) => {
    const w = await world(t)
    await w.store.write((wr) => {
      wr.putList(null, 'black', ['-'])
      wr.putList(null, 'white', ['ok.example'])
    })
    const s = await server(t, w)
    t.assert.strictEqual(firstA(await ask(s.port, 'x.example', 'A')), BLOCK_V4)
    t.assert.strictEqual(firstA(await ask(s.port, 'www.ok.example', 'A')), FWD)
  })

  test('enforces a store write within 100 ms without a restart', async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'] })
    const s = await server(t, w)
    t.assert.strictEqual(firstA(await ask(s.port, 'casino.example', 'A')), FWD)
    await w.store.write((wr) => wr.putUser({ ...w.store.getUser('alice')!, filter: [CATEGORY.GAMBLING] }))
    await sleep(100)
    t.assert.strictEqual(firstA(await ask(s.port, 'casino.example', 'A')), BLOCK_V4)
  })

  function ecs(address: string, prefix: number): [number, Buffer] {
    const bytes = address
      .split('.')
      .map(Number)
      .slice(0, Math.ceil(prefix / 8))
    return [8, Buffer.from([0, 1, prefix, 0, ...bytes])]
  }

  test('takes the client address from EDNS Client Subnet only when proxy.client-subnet is on', async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'behind-relay', ip: ['10.1.2.0/24'], filter: [CATEGORY.GAMBLING] })
    const msg = Buffer.concat([query('casino.example', 'A'), rawOpt([ecs('10.1.2.0', 24)])])
    msg.writeUInt16BE(1, 10) // ARCOUNT 1
    const off = await server(t, w)
    t.assert.strictEqual(firstA(dnsPacket.decode(await udpAsk(off.port, msg))), FWD)
    const on = await server(t, w, { proxy: { 'client-subnet': true } })
    t.assert.strictEqual(firstA(dnsPacket.decode(await udpAsk(on.port, msg))), BLOCK_V4)
  })
}
