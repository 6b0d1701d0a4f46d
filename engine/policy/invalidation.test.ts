// Targeted invalidation of the per-address snapshot cache on a real store on disk: a write drops the
// snapshots of what it touched (the change journal, engine/store/journal.ts), and only those; what no
// snapshot holds (global lists, list subscriptions, RPZ feeds) is enforced at once and rebuilds nothing;
// a global change, or a reader the journal no longer covers, drops everything.
import { test, type TestContext } from 'node:test'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { CATEGORY } from '../categories/index.js'
import { CategoryDb } from '../catdb/index.js'
import { JOURNAL_GENERATIONS, Store } from '../store/index.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { applyEntries } from '../lists/apply.js'
import { FeedStoreWriter, StoredFeeds } from '../rpz-feeds/feed-store.js'
import { FeedZone } from '../rpz-feeds/feed.js'
import { loadingStatus } from '../rpz-feeds/follower.js'
import { parseZoneFile } from '../rpz-zones/zonefile.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from './index.js'
import type { RpzLayer } from '../rpz-feeds/index.js'

const CATS = { 'casino.example': [CATEGORY.GAMBLING], 'porn.example': [CATEGORY.PORNOGRAPHY] }

function policyOver(store: Store, feeds: RpzLayer | null = null): Policy {
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    feeds
  })
  // Each test reads the generation itself (`check`), so it knows when the policy followed a write.
  policy.watcher.stop()
  return policy
}

/** Users a (10.0.0.1, client ID `a-phone`), b (10.0.0.2), c (10.0.0.3), every one blocking gambling. */
async function threeUsers(t: TestContext): Promise<{ store: Store; path: string }> {
  const s = tempStore(t, 'filterd-invalidation-')
  await buildCats(s.store, CATS)
  await addUser(s.store, { name: 'a', ip: ['10.0.0.1'], client_ids: ['a-phone'], filter: [CATEGORY.GAMBLING] })
  await addUser(s.store, { name: 'b', ip: ['10.0.0.2'], filter: [CATEGORY.GAMBLING] }, { black: ['b.example'] })
  await addUser(s.store, { name: 'c', ip: ['10.0.0.3'], filter: [CATEGORY.GAMBLING] })
  return s
}

const judge = (p: Policy, address: string, name: string): Verdict =>
  p.evaluate(address, new HostKeys(name), new Verdict())

/** Reads the generation until the policy has followed a write (another process's commit shows on a later turn). */
async function followed(t: TestContext, policy: Policy): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!policy.watcher.check()) {
    t.assert.ok(Date.now() < deadline, 'the write never reached the reader')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Runs `body` (an async function body with `store` open on `path`) in another node process. */
async function inChild(path: string, body: string): Promise<void> {
  const storeModule = new URL('../store/index.js', import.meta.url).href
  const script = `import { Store } from ${JSON.stringify(storeModule)}
const store = Store.open(${JSON.stringify(path)})
${body}
await store.close()`
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
}

test("another process's write to user a is enforced at once, and b's and c's cached snapshots stay", async (t: TestContext) => {
  const { store, path } = await threeUsers(t)
  const policy = policyOver(store)
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3'])
    t.assert.strictEqual(judge(policy, ip, 'casino.example').action, 'block', ip)
  t.assert.strictEqual(policy.snapshotForClientId('a-phone')?.user, 'a')
  t.assert.strictEqual(policy.snapshotsBuilt, 4)
  const b = policy.snapshotFor('10.0.0.2')

  await inChild(
    path,
    `await store.write((w) => w.putUser({ ...store.getUser('a'), filter: [${CATEGORY.PORNOGRAPHY}] }))`
  )
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'casino.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'porn.example').action, 'block')
  t.assert.ok(policy.snapshotForClientId('a-phone')?.policy.filter.has(CATEGORY.PORNOGRAPHY), 'the client ID too')
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'b.example').reason, 'user-blacklist')
  t.assert.strictEqual(judge(policy, '10.0.0.3', 'casino.example').action, 'block')
  // a's address and client ID were built again; b's and c's were not.
  t.assert.strictEqual(policy.snapshotsBuilt, 6)
  t.assert.strictEqual(policy.snapshotFor('10.0.0.2'), b)

  // A user's own list, an address moved to another user, a client ID taken away: each its key alone.
  await store.write((w) => w.putList('b', 'black', ['b2.example']))
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'b.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'b2.example').action, 'block')
  t.assert.strictEqual(policy.snapshotsBuilt, 7)
  await store.write((w) => {
    w.claimAddresses('b', ['10.0.0.3'])
    w.setClientIds('a', [])
  })
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.0.0.3', 'b2.example').reason, 'user-blacklist')
  t.assert.strictEqual(policy.snapshotForClientId('a-phone'), undefined)
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'porn.example').action, 'block')
})

test('a changed prefix drops the cached addresses inside it; the server defaults drop the anonymous ones', async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const policy = policyOver(store)
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.9.0.5', '10.8.0.5'])
    t.assert.strictEqual(judge(policy, ip, 'casino.example').action, ip.startsWith('10.0.') ? 'block' : 'forward')
  t.assert.strictEqual(policy.snapshotsBuilt, 4)

  await store.write((w) => w.claimAddresses('c', ['10.9.0.0/16']))
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.9.0.5', 'casino.example').action, 'block')
  t.assert.strictEqual(policy.snapshotFor('10.9.0.5').user, 'c')
  t.assert.strictEqual(judge(policy, '10.8.0.5', 'casino.example').action, 'forward')
  t.assert.strictEqual(policy.snapshotsBuilt, 5, 'only the address inside the prefix')

  await store.write((w) => w.putServerDefaults({ ...store.getServerDefaults(), filter: [CATEGORY.GAMBLING] }))
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.8.0.5', 'casino.example').action, 'block')
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'casino.example').action, 'block')
  t.assert.strictEqual(judge(policy, '10.9.0.5', 'casino.example').action, 'block')
  t.assert.strictEqual(policy.snapshotsBuilt, 6, 'only the anonymous address')
})

test('the global lists are enforced at once and rebuild no snapshot; a rebuilt category database drops all', async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const policy = policyOver(store)
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.7.0.1']) judge(policy, ip, 'casino.example')
  t.assert.strictEqual(policy.snapshotsBuilt, 3)

  await store.write((w) => {
    w.putList(null, 'black', ['global.example'])
    w.putList(null, 'white', ['casino.example'])
  })
  await followed(t, policy)
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.7.0.1']) {
    t.assert.strictEqual(judge(policy, ip, 'global.example').reason, 'global-blacklist', ip)
    t.assert.strictEqual(judge(policy, ip, 'casino.example').reason, 'global-whitelist', ip)
  }
  t.assert.strictEqual(policy.snapshotsBuilt, 3)

  // A global change (the category database is not a key of one user): everything is built again.
  await buildCats(store, { 'porn.example': [CATEGORY.GAMBLING] })
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'porn.example').reason, 'category')
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'porn.example').reason, 'category')
  t.assert.strictEqual(policy.snapshotsBuilt, 5)
})

test('a reader the journal no longer covers drops everything; one that kept up keeps what was not touched', async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const behind = policyOver(store)
  const current = policyOver(store)
  for (const p of [behind, current]) for (const ip of ['10.0.0.1', '10.0.0.2']) judge(p, ip, 'casino.example')
  const start = store.generation()
  // More writes than the journal keeps, all to user c; `current` follows each thousand, `behind` none.
  const WRITES = JOURNAL_GENERATIONS + 100
  for (let done = 0; done < WRITES; done += 1000) {
    const n = Math.min(1000, WRITES - done)
    await Promise.all(
      Array.from({ length: n }, (_, i) => store.write((w) => w.putList('c', 'black', [`c${done + i}.example`])))
    )
    t.assert.strictEqual(current.watcher.check(), true)
  }
  t.assert.strictEqual(store.generation(), start + WRITES)
  t.assert.ok(behind.watcher.check())
  for (const p of [behind, current]) {
    t.assert.strictEqual(judge(p, '10.0.0.1', 'casino.example').action, 'block')
    t.assert.strictEqual(judge(p, '10.0.0.2', 'b.example').reason, 'user-blacklist')
    t.assert.strictEqual(judge(p, '10.0.0.3', `c${WRITES - 1}.example`).reason, 'user-blacklist')
  }
  t.assert.strictEqual(behind.snapshotsBuilt, 2 + 3)
  t.assert.strictEqual(current.snapshotsBuilt, 2 + 1)
  t.assert.strictEqual(store.changesBetween(start, store.generation()).global, true, 'pruned: not covered')
  // The journal keeps the last JOURNAL_GENERATIONS entries: the first writes' are gone.
  const meta = store.root.openDB({ name: 'meta' })
  t.assert.strictEqual(meta.get(['journal', start + 1]), undefined)
  t.assert.strictEqual(
    [...meta.getKeys({ start: ['journal', 0], end: ['journal', Infinity] })].length,
    JOURNAL_GENERATIONS
  )
  t.assert.strictEqual(store.changesBetween(start + 200, store.generation()).global, false)
})

test('a list subscription refresh and an RPZ feed serial are enforced at once and rebuild no snapshot', async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const feedWriter = new FeedStoreWriter(store)
  const settings = [{ zone: 'f.rpz', action: 'zone' as const, category: null }]
  const zone = (serial: number, body: string): FeedZone =>
    FeedZone.fromRecords(
      'f.rpz',
      parseZoneFile(`$ORIGIN f.rpz.\n@ 60 SOA ns. admin. ${serial} 60 60 600 60\n@ NS localhost.\n${body}`, 'f.rpz')
    )
  const report = (feed: FeedZone) => ({
    ...loadingStatus('f.rpz'),
    state: 'ok' as const,
    serial: feed.serial,
    unsupported: 0
  })
  const first = zone(1, 'one.example CNAME .\n')
  await feedWriter.update(first, 'whole', report(first))
  const policy = policyOver(store, new StoredFeeds(store, settings))
  // A subscription that lists another name already: the answers for the names asked below are remembered.
  await applyEntries(store, 'ads', new Set(['other.example']), 'black')
  await followed(t, policy)
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.7.0.1']) {
    t.assert.strictEqual(judge(policy, ip, 'one.example').reason, 'rpz')
    t.assert.strictEqual(judge(policy, ip, 'listed.example').action, 'forward')
  }
  t.assert.strictEqual(policy.snapshotsBuilt, 3)

  await applyEntries(store, 'ads', new Set(['listed.example']), 'black')
  await followed(t, policy)
  const second = zone(2, 'two.example CNAME .\n')
  await feedWriter.update(second, 'whole', report(second))
  await followed(t, policy)
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.7.0.1']) {
    t.assert.strictEqual(judge(policy, ip, 'listed.example').reason, 'global-blacklist', ip)
    t.assert.strictEqual(judge(policy, ip, 'two.example').reason, 'rpz', ip)
    t.assert.strictEqual(judge(policy, ip, 'one.example').action, 'forward', ip)
  }
  t.assert.strictEqual(policy.snapshotsBuilt, 3)
})

test("a replica's applied records drop the snapshots of the keys they name, and a bootstrap step all", async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const policy = policyOver(store)
  for (const ip of ['10.0.0.1', '10.0.0.2']) judge(policy, ip, 'casino.example')
  // What the follower (engine/replica) applies from the shared store's stream: a's record, written over.
  const a = { ...store.getUser('a')!, filter: [] }
  await store.applyRecords([['users', 'a', a]], { epoch: 'e', id: '1-0', seq: 1 })
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.0.0.1', 'casino.example').action, 'forward')
  t.assert.strictEqual(judge(policy, '10.0.0.2', 'casino.example').action, 'block')
  t.assert.strictEqual(policy.snapshotsBuilt, 3)
  await store.startBootstrap()
  await followed(t, policy)
  judge(policy, '10.0.0.2', 'casino.example')
  t.assert.strictEqual(policy.snapshotsBuilt, 4)
})

test('once more users have changed than the cache holds, the next change drops everything', async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    maxCachedAddresses: 2
  })
  policy.watcher.stop()
  judge(policy, '10.0.0.2', 'casino.example')
  // Two changes of user c (the cache's size): b's snapshot stays; the third drops it with the rest.
  for (const n of [1, 2]) {
    await store.write((w) => w.putList('c', 'black', [`c${n}.example`]))
    await followed(t, policy)
    judge(policy, '10.0.0.2', 'casino.example')
    t.assert.strictEqual(policy.snapshotsBuilt, 1, `after change ${n}`)
  }
  await store.write((w) => w.putList('c', 'black', ['c3.example']))
  await followed(t, policy)
  t.assert.strictEqual(judge(policy, '10.0.0.3', 'c3.example').reason, 'user-blacklist')
  judge(policy, '10.0.0.2', 'casino.example')
  t.assert.strictEqual(policy.snapshotsBuilt, 3)
})

test("the global steps' answers remembered per name follow the global lists and the subscriptions", async (t: TestContext) => {
  const { store } = await threeUsers(t)
  const policy = policyOver(store)
  const ask = (name: string): string => {
    const v = judge(policy, '10.0.0.1', name)
    return `${v.reason} ${v.matched}`
  }
  // Each name asked before every change, so that a remembered answer would be the one read.
  const names = ['www.site.example', 'a.update.eset.com']
  t.assert.deepStrictEqual(names.map(ask), ['none ', 'builtin-whitelist update.eset.com'])
  await store.write((w) => w.putList(null, 'black', ['site.example', 'eset.com']))
  await followed(t, policy)
  t.assert.deepStrictEqual(names.map(ask), ['global-blacklist site.example', 'builtin-whitelist update.eset.com'])
  await store.write((w) => w.putList(null, 'white', ['www.site.example']))
  await followed(t, policy)
  t.assert.deepStrictEqual(names.map(ask), ['global-whitelist www.site.example', 'builtin-whitelist update.eset.com'])
  await store.write((w) => {
    w.putList(null, 'white', [])
    w.putList(null, 'black', [])
  })
  await followed(t, policy)
  t.assert.deepStrictEqual(names.map(ask), ['none ', 'builtin-whitelist update.eset.com'])
  await applyEntries(store, 'ads', new Set(['site.example']), 'black')
  await followed(t, policy)
  t.assert.deepStrictEqual(names.map(ask), ['global-blacklist site.example', 'builtin-whitelist update.eset.com'])
  await applyEntries(store, 'good', new Set(['www.site.example']), 'white')
  await followed(t, policy)
  t.assert.deepStrictEqual(names.map(ask), ['global-whitelist www.site.example', 'builtin-whitelist update.eset.com'])
  await applyEntries(store, 'good', new Set(), 'white')
  await applyEntries(store, 'ads', new Set(), 'black')
  await followed(t, policy)
  t.assert.deepStrictEqual(names.map(ask), ['none ', 'builtin-whitelist update.eset.com'])
})
