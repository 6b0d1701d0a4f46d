// Policy.evaluate: every verdict step of docs/contract.md and its precedence, on a real temp store.
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../categories/index.js'
import { CategoryDb } from '../catdb/index.js'
import { Store } from '../store/index.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { parseConfig } from '../features.js'
import { HostKeys, Policy, Verdict, createPolicy, loadSafeHosts, parseSafeHosts } from './index.js'

interface Fixture {
  store: Store
  policy: Policy
  judge: (address: string, name: string, wantCats?: boolean) => Verdict
}

async function fixture(t: TestContext, setup: (s: Store) => Promise<void> = async () => {}): Promise<Fixture> {
  const { store } = tempStore(t, 'filterd-policy-')
  await buildCats(store, {
    'casino.example': [CATEGORY.GAMBLING],
    'porn.example': [CATEGORY.PORNOGRAPHY, CATEGORY.SOCIAL_NETWORKS],
    'www.google.com': [CATEGORY.SEARCH_ENGINES],
    'youtube.com': [CATEGORY.VIDEO_STREAMING]
  })
  await setup(store)
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist(['vendor.example']),
    safeHosts: loadSafeHosts()
  })
  return {
    store,
    policy,
    judge: (address, name, wantCats = false) => policy.evaluate(address, new HostKeys(name), new Verdict(), wantCats)
  }
}

const user = addUser

test('HostKeys yields the name and each parent', (t: TestContext) => {
  const k = new HostKeys('a.b.example.com')
  t.assert.strictEqual(k.labelCount, 4)
  t.assert.deepStrictEqual(
    [0, 1, 2, 3, 4].map((i) => k.suffix(i)),
    ['a.b.example.com', 'b.example.com', 'example.com', 'com', '']
  )
  t.assert.strictEqual(new HostKeys('').labelCount, 0)
})

test('1. the built-in whitelist passes even a globally blacklisted name', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await s.write((w) => {
      w.putList(null, 'black', ['-', 'kaspersky-labs.com', 'vendor.example'])
    })
  })
  const v = f.judge('10.0.0.1', 'upd.kaspersky-labs.com')
  t.assert.deepStrictEqual([v.action, v.reason, v.matched], ['forward', 'builtin-whitelist', 'kaspersky-labs.com'])
  t.assert.strictEqual(f.judge('10.0.0.1', 'www.vendor.example').reason, 'builtin-whitelist')
})

test('2. the global whitelist beats the global blacklist, which beats `-`, and all beat the user', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await s.write((w) => {
      w.putList(null, 'white', ['ok.example'])
      w.putList(null, 'black', ['ok.example', 'bad.example'])
    })
    await user(s, { name: 'u', ip: ['10.0.0.2'], status: 'disabled' }, { white: ['bad.example'] })
  })
  t.assert.deepStrictEqual(
    [f.judge('10.0.0.2', 'a.ok.example').action, f.judge('10.0.0.2', 'a.ok.example').reason],
    ['forward', 'global-whitelist']
  )
  const v = f.judge('10.0.0.2', 'x.bad.example')
  t.assert.deepStrictEqual([v.action, v.reason, v.matched, v.user], ['block', 'global-blacklist', 'bad.example', 'u'])
  t.assert.strictEqual(f.judge('10.0.0.2', 'other.example').reason, 'user-disabled')
})

test('2. a global blacklist holding - blocks everything the global whitelist does not pass', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await s.write((w) => {
      w.putList(null, 'white', ['ok.example'])
      w.putList(null, 'black', ['-'])
    })
  })
  t.assert.deepStrictEqual(
    [f.judge('10.0.0.9', 'x.example').action, f.judge('10.0.0.9', 'x.example').reason],
    ['block', 'global-allow-only']
  )
  t.assert.strictEqual(f.judge('10.0.0.9', 'www.ok.example').action, 'forward')
})

test('3. the user is found by address (exact, CIDR, IPv6); an unknown address gets the server defaults', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(s, { name: 'v4', ip: ['192.0.2.7'], filter: [CATEGORY.GAMBLING] })
    await user(s, { name: 'net', ip: ['198.51.100.0/24'], filter: [CATEGORY.PORNOGRAPHY] })
    await user(s, { name: 'v6', ip: ['2001:db8::/48'], filter: [CATEGORY.GAMBLING] })
    await s.write((w) =>
      w.putServerDefaults({
        filter: [CATEGORY.PORNOGRAPHY],
        safesearch: false,
        safeyoutube: false,
        safesearchredirect: ''
      })
    )
  })
  t.assert.deepStrictEqual(
    [f.judge('192.0.2.7', 'casino.example').action, f.judge('192.0.2.7', 'casino.example').user],
    ['block', 'v4']
  )
  t.assert.strictEqual(f.judge('198.51.100.77', 'porn.example').user, 'net')
  t.assert.strictEqual(f.judge('2001:db8::1', 'casino.example').action, 'block')
  const anon = f.judge('203.0.113.1', 'porn.example')
  t.assert.deepStrictEqual([anon.action, anon.user, anon.reason], ['block', null, 'category'])
  t.assert.strictEqual(f.judge('203.0.113.1', 'casino.example').action, 'forward')
})

test('4. a disabled user passes everything the global lists do not decide', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(
      s,
      { name: 'off', ip: ['10.0.0.3'], status: 'disabled', filter: [CATEGORY.GAMBLING], safesearch: 'on' },
      { black: ['-'] }
    )
  })
  for (const name of ['casino.example', 'www.google.com', 'x.example']) {
    const v = f.judge('10.0.0.3', name)
    t.assert.deepStrictEqual([v.action, v.reason], ['forward', 'user-disabled'], name)
  }
})

test('5. user whitelist beats user blacklist, which beats safe search and categories; - allows only the whitelist', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(
      s,
      { name: 'u', ip: ['10.0.0.4'], filter: [CATEGORY.GAMBLING], safesearch: 'on' },
      { white: ['casino.example', 'both.example'], black: ['both.example', 'www.google.com', 'mine.example'] }
    )
    await user(s, { name: 'strict', ip: ['10.0.0.5'] }, { white: ['ok.example'], black: ['-'] })
  })
  t.assert.strictEqual(f.judge('10.0.0.4', 'casino.example').reason, 'user-whitelist')
  t.assert.strictEqual(f.judge('10.0.0.4', 'a.both.example').reason, 'user-whitelist')
  const bl = f.judge('10.0.0.4', 'www.google.com')
  t.assert.deepStrictEqual([bl.action, bl.reason, bl.matched], ['block', 'user-blacklist', 'www.google.com'])
  t.assert.deepStrictEqual(
    [f.judge('10.0.0.5', 'x.example').action, f.judge('10.0.0.5', 'x.example').reason],
    ['block', 'user-allow-only']
  )
  t.assert.strictEqual(f.judge('10.0.0.5', 'ok.example').action, 'forward')
})

test('6. safe search answers search engines (exact hosts only) and beats safe video and categories', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(s, { name: 'kid', ip: ['10.0.0.6'], safesearch: 'on', filter: [CATEGORY.SEARCH_ENGINES] })
  })
  const v = f.judge('10.0.0.6', 'www.google.com', true)
  t.assert.deepStrictEqual(
    [v.action, v.reason, v.target, v.cats],
    ['safesearch', 'safesearch', 'google', [CATEGORY.SEARCH_ENGINES]]
  )
  t.assert.strictEqual(f.judge('10.0.0.6', 'www.google.de').action, 'safesearch')
  t.assert.strictEqual(f.judge('10.0.0.6', 'mail.google.com').action, 'forward')
  t.assert.strictEqual(f.judge('10.0.0.6', 'www.google.attacker.example.com').action, 'forward')
})

test('7. safe video answers video hosts as their restricted target, before categories', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(s, { name: 'kid', ip: ['10.0.0.7'], safeyoutube: 'on', filter: [CATEGORY.VIDEO_STREAMING] })
  })
  const v = f.judge('10.0.0.7', 'www.youtube.com')
  t.assert.deepStrictEqual([v.action, v.reason, v.target], ['safevideo', 'safevideo', 'restrict.youtube.com'])
  // Not a listed video host: the category decides.
  const c = f.judge('10.0.0.7', 'music.youtube.com')
  t.assert.deepStrictEqual(
    [c.action, c.reason, c.matched, c.blockedCats],
    ['block', 'category', 'youtube.com', [CATEGORY.VIDEO_STREAMING]]
  )
})

test("8. a category in the filter blocks, by the most specific record; 9. otherwise forward with the name's categories", async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(s, { name: 'u', ip: ['10.0.0.8'], filter: [CATEGORY.PORNOGRAPHY] })
  })
  const v = f.judge('10.0.0.8', 'a.porn.example')
  t.assert.deepStrictEqual(
    [v.action, v.reason, v.cats, v.blockedCats],
    ['block', 'category', [CATEGORY.PORNOGRAPHY, CATEGORY.SOCIAL_NETWORKS], [CATEGORY.PORNOGRAPHY]]
  )
  const p = f.judge('10.0.0.8', 'casino.example')
  t.assert.deepStrictEqual([p.action, p.reason, p.cats, p.blockedCats], ['forward', 'none', [CATEGORY.GAMBLING], []])
  t.assert.deepStrictEqual(f.judge('10.0.0.8', 'unknown.example').cats, [])
})

test('wantCats fills the categories when a list decided', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await s.write((w) => w.putList(null, 'black', ['casino.example']))
  })
  t.assert.deepStrictEqual(f.judge('10.0.0.1', 'casino.example', true).cats, [CATEGORY.GAMBLING])
  t.assert.deepStrictEqual(f.judge('10.0.0.1', 'casino.example', false).cats, [])
})

test('cached snapshots are dropped when the store generation moves', async (t: TestContext) => {
  const f = await fixture(t, async (s) => {
    await user(s, { name: 'u', ip: ['10.0.0.10'] })
  })
  t.assert.strictEqual(f.judge('10.0.0.10', 'casino.example').action, 'forward')
  await f.store.write((w) => w.putUser({ ...f.store.getUser('u')!, filter: [CATEGORY.GAMBLING] }))
  t.assert.strictEqual(f.judge('10.0.0.10', 'casino.example').action, 'forward', 'cached until the watcher checks')
  t.assert.strictEqual(f.policy.watcher.check(), true)
  t.assert.strictEqual(f.judge('10.0.0.10', 'casino.example').action, 'block')
  t.assert.strictEqual(f.policy.watcher.check(), false)
})

test('proxy.policy-cache-addresses bounds the per-address cache: a full cache evicts an address not used since', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-policy-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING] })
  for (const [name, ip] of [
    ['a', '10.0.0.21'],
    ['b', '10.0.0.22'],
    ['c', '10.0.0.23']
  ]) {
    await user(store, { name: name!, ip: [ip!] })
  }
  const small = createPolicy(parseConfig('proxy:\n  policy-cache-addresses: 2\n', '/x.yaml'), store)
  const large = createPolicy(parseConfig('', '/x.yaml'), store)
  const judge = (p: Policy, address: string): string =>
    p.evaluate(address, new HostKeys('casino.example'), new Verdict(), false).action
  for (const p of [small, large]) {
    t.assert.strictEqual(judge(p, '10.0.0.21'), 'forward')
    t.assert.strictEqual(judge(p, '10.0.0.22'), 'forward')
  }
  // The changes are not announced to the policies (no watcher check): a cached snapshot stays as it was.
  await store.write((w) => {
    w.putUser({ ...store.getUser('a')!, filter: [CATEGORY.GAMBLING] })
    w.putUser({ ...store.getUser('b')!, filter: [CATEGORY.GAMBLING] })
  })
  for (const p of [small, large]) {
    t.assert.strictEqual(judge(p, '10.0.0.21'), 'forward', 'still cached')
    t.assert.strictEqual(judge(p, '10.0.0.23'), 'forward')
  }
  // A third address in the cache of 2 evicted 10.0.0.22, not used since it was cached, which is read
  // afresh; 10.0.0.21, just used, stays; the default (100,000) still holds both old snapshots.
  t.assert.strictEqual(judge(small, '10.0.0.21'), 'forward')
  t.assert.strictEqual(judge(small, '10.0.0.22'), 'block')
  t.assert.strictEqual(judge(large, '10.0.0.22'), 'forward')
})

test('a full per-address cache keeps the addresses that keep querying while one-off addresses churn through it', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-policy-')
  const hot = Array.from({ length: 20 }, (_, i) => `10.1.0.${i + 1}`)
  for (const [i, ip] of hot.entries()) await user(store, { name: `hot${i}`, ip: [ip] })
  const policy = createPolicy(parseConfig('proxy:\n  policy-cache-addresses: 100\n', '/x.yaml'), store)
  const first = hot.map((ip) => policy.snapshotFor(ip))
  // 2,000 addresses asking once each (20 fills of the cache), the hot ones asking between them.
  for (let i = 0; i < 2000; i++) {
    policy.snapshotFor(`10.2.${i >> 8}.${i & 255}`)
    if (i % 20 === 19) for (const ip of hot) policy.snapshotFor(ip)
  }
  const missed = hot.filter((ip, i) => policy.snapshotFor(ip) !== first[i])
  t.assert.deepStrictEqual(missed, [], 'no hot address was read again')
})

test('snapshots share what their users share: one Set per category filter, one empty list', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-policy-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING] })
  await user(store, { name: 'a', ip: ['10.0.0.31'], filter: [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY] })
  await user(store, { name: 'b', ip: ['10.0.0.32'], filter: [CATEGORY.PORNOGRAPHY, CATEGORY.GAMBLING] })
  await user(store, { name: 'c', ip: ['10.0.0.33'], filter: [CATEGORY.GAMBLING] }, { white: ['ok.example'] })
  const policy = createPolicy(parseConfig('', '/x.yaml'), store)
  const [a, b, c] = ['10.0.0.31', '10.0.0.32', '10.0.0.33'].map((ip) => policy.snapshotFor(ip))
  t.assert.strictEqual(a!.policy.filter, b!.policy.filter, 'the same filter, in any order: one Set')
  t.assert.notStrictEqual(a!.policy.filter, c!.policy.filter)
  t.assert.strictEqual(a!.policy.whitelist, b!.policy.whitelist, 'no whitelist: the one empty Set')
  t.assert.strictEqual(a!.policy.blacklist, c!.policy.blacklist)
  t.assert.deepStrictEqual([...c!.policy.whitelist], ['ok.example'])
  const v = policy.evaluate('10.0.0.32', new HostKeys('casino.example'), new Verdict(), false)
  t.assert.deepStrictEqual([v.action, v.reason], ['block', 'category'])
})

test('parseSafeHosts reads search and video lines and refuses bad ones', (t: TestContext) => {
  const h = parseSafeHosts('search www.example.* ex\nvideo v.example.com restrict.example.com\n')
  t.assert.strictEqual(h.searchEngine('www.example.co.uk'), 'ex')
  t.assert.strictEqual(h.videoTarget('v.example.com'), 'restrict.example.com')
  t.assert.throws(() => parseSafeHosts('video v.example.com'), /target/)
  t.assert.throws(() => parseSafeHosts('other x'), /expected/)
})
