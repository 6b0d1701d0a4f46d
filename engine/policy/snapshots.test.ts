// The per-address snapshot cache: CLOCK eviction keeps the addresses that query, and snapshots share one
// SharedPolicy per distinct content, on a real temp store.
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../categories/index.js'
import { CategoryDb } from '../catdb/index.js'
import type { Store } from '../store/index.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from './index.js'
import { SnapshotCache } from './snapshot-cache.js'

async function policyOver(
  t: TestContext,
  maxCachedAddresses: number,
  setup: (s: Store) => Promise<void>
): Promise<Policy> {
  const { store } = tempStore(t, 'filterd-snapshots-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING], 'porn.example': [CATEGORY.PORNOGRAPHY] })
  await setup(store)
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    maxCachedAddresses
  })
  policy.watcher.stop()
  return policy
}

const judge = (p: Policy, address: string, name: string): Verdict =>
  p.evaluate(address, new HostKeys(name), new Verdict())

test('a full cache keeps the addresses that keep querying while addresses seen once pass through', async (t: TestContext) => {
  const HOT = 10
  const CACHE = 50
  const COLD = 500
  const policy = await policyOver(t, CACHE, async (s) => {
    for (let i = 0; i < HOT; i++)
      await addUser(s, { name: `hot${i}`, ip: [`10.1.0.${i}`], filter: [CATEGORY.GAMBLING] })
  })
  const hot = (): void => {
    for (let i = 0; i < HOT; i++) t.assert.strictEqual(judge(policy, `10.1.0.${i}`, 'casino.example').action, 'block')
  }
  hot()
  t.assert.strictEqual(policy.snapshotsBuilt, HOT)
  // Anonymous addresses, each queried once, many times the cache's size; the hot set queries between them.
  for (let i = 0; i < COLD; i++) {
    judge(policy, `10.2.${i >> 8}.${i & 255}`, 'casino.example')
    hot()
  }
  // Each cold address was built once; not one hot snapshot was built again (emptying the cache rebuilt them all).
  t.assert.strictEqual(policy.snapshotsBuilt, HOT + COLD)
})

test('users with the same filter and switches share one policy object; what differs does not', async (t: TestContext) => {
  const policy = await policyOver(t, 1000, async (s) => {
    await addUser(s, { name: 'a', ip: ['10.0.0.1', '10.0.0.2'], filter: [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY] })
    await addUser(s, { name: 'b', ip: ['10.0.0.3'], filter: [CATEGORY.PORNOGRAPHY, CATEGORY.GAMBLING] })
    await addUser(s, { name: 'c', ip: ['10.0.0.4'], filter: [CATEGORY.GAMBLING] })
    await addUser(s, {
      name: 'd',
      ip: ['10.0.0.5'],
      filter: [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY],
      safesearch: 'on'
    })
    await addUser(s, {
      name: 'e',
      ip: ['10.0.0.6'],
      filter: [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY],
      status: 'disabled'
    })
    await addUser(
      s,
      { name: 'f', ip: ['10.0.0.7', '10.0.0.8'], filter: [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY] },
      { black: ['x.example'] }
    )
    await addUser(
      s,
      { name: 'g', ip: ['10.0.0.9'], filter: [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY] },
      { black: ['x.example'] }
    )
  })
  const of = (a: string) => policy.snapshotFor(a)
  t.assert.strictEqual(of('10.0.0.1').user, 'a')
  t.assert.strictEqual(of('10.0.0.3').user, 'b')
  // The same categories in another order are the same policy.
  t.assert.strictEqual(of('10.0.0.1').policy, of('10.0.0.3').policy)
  t.assert.strictEqual(of('10.0.0.1').policy, of('10.0.0.2').policy)
  for (const other of ['10.0.0.4', '10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.9'])
    t.assert.notStrictEqual(of(other).policy, of('10.0.0.1').policy, other)
  // A user's own lists are read once and referenced by each of its addresses; another user's are its own.
  t.assert.strictEqual(of('10.0.0.7').policy, of('10.0.0.8').policy)
  t.assert.notStrictEqual(of('10.0.0.9').policy.blacklist, of('10.0.0.7').policy.blacklist)
  t.assert.strictEqual(judge(policy, '10.0.0.7', 'x.example').reason, 'user-blacklist')
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'x.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.0.6', 'casino.example').reason, 'user-disabled')
})

test('a generation change rebuilds shared policies: one user changed, the others sharing its old policy not', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-snapshots-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING] })
  await addUser(store, { name: 'a', ip: ['10.0.0.1'], filter: [CATEGORY.GAMBLING] })
  await addUser(store, { name: 'b', ip: ['10.0.0.2'], filter: [CATEGORY.GAMBLING] }, { black: ['x.example'] })
  await addUser(store, { name: 'c', ip: ['10.0.0.3'], filter: [CATEGORY.GAMBLING] })
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts()
  })
  t.after(() => policy.watcher.stop())
  t.assert.strictEqual(policy.snapshotFor('10.0.0.1').policy, policy.snapshotFor('10.0.0.3').policy)
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'x.example').action, 'block')
  await store.write((w) => {
    w.putUser({ ...store.getUser('a')!, filter: [] })
    w.putList('b', 'black', ['y.example'])
  })
  t.assert.strictEqual(policy.watcher.check(), true)
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'casino.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.0.3', 'casino.example').action, 'block')
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'x.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'y.example').action, 'block')
})

test('the cache grows its slots to the limit and evicts across all of them', (t: TestContext) => {
  const cache = new SnapshotCache<number>(3000)
  for (let i = 0; i < 5000; i++) {
    cache.set(`k${i}`, i)
    t.assert.strictEqual(cache.get('k0'), 0, `after k${i}`)
  }
  t.assert.strictEqual(cache.size, 3000)
  t.assert.strictEqual(cache.stored, 5000)
  t.assert.strictEqual(cache.get('k4999'), 4999)
  // Seen once and not since: the first of them went first.
  t.assert.strictEqual(cache.get('k1'), undefined)
})

test('a write to a user is enforced after the users table was trimmed to the users still cached', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-snapshots-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING] })
  for (let i = 0; i < 9; i++) await addUser(store, { name: `u${i}`, ip: [`10.0.1.${i}`], filter: [CATEGORY.GAMBLING] })
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    maxCachedAddresses: 4
  })
  t.after(() => policy.watcher.stop())
  // The ninth user finds the table at twice the cache's size: it keeps the users of u4-u7, then u8 takes u4's slot.
  for (let i = 0; i < 9; i++) judge(policy, `10.0.1.${i}`, 'casino.example')
  const built = policy.snapshotsBuilt
  for (let i = 5; i < 9; i++) t.assert.strictEqual(judge(policy, `10.0.1.${i}`, 'casino.example').action, 'block')
  t.assert.strictEqual(policy.snapshotsBuilt, built, 'u5-u8 are cached')
  await store.write((w) => w.putUser({ ...store.getUser('u6')!, filter: [] }))
  t.assert.strictEqual(policy.watcher.check(), true)
  t.assert.strictEqual(judge(policy, '10.0.1.6', 'casino.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.1.7', 'casino.example').action, 'block')
})
