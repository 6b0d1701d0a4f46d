// The refresher against a local HTTP server and a real LMDB store: a first copy applied and enforced,
// a 304, a changed list applied as its difference, and every failure (500, a body cut short, a body
// too large, a server too slow, a page that is not a list) keeping the last good copy.
import { test, type TestContext } from 'node:test'
import { CategoryDb } from '../catdb/index.js'
import { CATEGORY } from '../categories/index.js'
import { silentLogger } from '../log/index.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from '../policy/index.js'
import { Store } from '../store/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { currentEntries, REV_KEY, sourceState, type EntryChange, type ListSource, type RevRecord } from './keys.js'
import { ListRefresher, type RefresherSettings } from './refresher.js'
import { startListServer } from '../testing/list-server.js'
import { removeSource, writeChanges } from './apply.js'

const SETTINGS: RefresherSettings = {
  interval: 3600,
  jitter: 0.1,
  retry: 60,
  timeout: 2,
  'max-bytes': 10_000,
  'max-entries': 1000,
  'max-invalid': 0.5
}

function policyOf(store: Store): Policy {
  return new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts()
  })
}

function judge(policy: Policy, name: string, address = '10.9.9.9'): Verdict {
  policy.watcher.check()
  return policy.evaluate(address, new HostKeys(name), new Verdict())
}

function refresher(store: Store, settings: Partial<RefresherSettings> = {}, now = Date.now): ListRefresher {
  return new ListRefresher({
    store,
    settings: { ...SETTINGS, ...settings },
    configSources: [],
    logger: silentLogger(),
    now
  })
}

const source = (url: string, over: Partial<ListSource> = {}): ListSource => ({
  id: 'ads',
  url,
  format: 'domains',
  target: 'blacklist',
  enabled: true,
  ...over
})

test('200, then 304 with the validators, then a changed list applied as its difference', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-lists-')
  const lastModified = 'Wed, 25 Nov 2026 10:00:00 GMT'
  const server = await startListServer(t, {
    kind: 'list',
    body: 'one.example\ntwo.example\nthree.example\n',
    etag: '"v1"',
    lastModified
  })
  const r = refresher(store)
  const src = source(server.url)
  const policy = policyOf(store)
  t.assert.deepStrictEqual(await r.refresh(src, false), {
    status: 'changed',
    entries: 3,
    added: 3,
    removed: 0,
    moved: 0
  })
  t.assert.strictEqual(judge(policy, 'www.two.example').action, 'block')
  t.assert.strictEqual(judge(policy, 'www.two.example').reason, 'global-blacklist')
  const first = sourceState(store, 'ads')!
  t.assert.strictEqual(first.etag, '"v1"')
  t.assert.strictEqual(first.lastModified, lastModified)
  t.assert.ok(first.nextDue >= first.lastAttempt + 3600_000 && first.nextDue <= first.lastAttempt + 3960_000)

  t.assert.deepStrictEqual(await r.refresh(src, false), { status: 'unchanged', entries: 3 })
  t.assert.deepStrictEqual(server.requests[1], { ifNoneMatch: '"v1"', ifModifiedSince: lastModified })
  // One connection per download, none kept idle until the next one an hour later (engine/lists/fetch.ts).
  t.assert.deepStrictEqual(server.connections, ['close', 'close'])
  const generation = store.generation()

  server.mode = { kind: 'list', body: 'one.example\nthree.example\nfour.example\n', etag: '"v2"' }
  t.assert.deepStrictEqual(await r.refresh(src, false), {
    status: 'changed',
    entries: 3,
    added: 1,
    removed: 1,
    moved: 0
  })
  // Only the difference was written: one write (the batch with the state), whose record names two entries.
  t.assert.strictEqual(store.generation(), generation + 1)
  const rev = store.getSubscriptionValue(REV_KEY) as RevRecord
  t.assert.deepStrictEqual(rev.changes.sort(), [
    ['four.example', null, 'black'],
    ['two.example', 'black', null]
  ])
  t.assert.strictEqual(judge(policy, 'two.example').action, 'forward')
  t.assert.strictEqual(judge(policy, 'four.example').action, 'block')
  t.assert.strictEqual(judge(policy, 'one.example').action, 'block')
  t.assert.deepStrictEqual([...currentEntries(store, 'ads').keys()].sort(), [
    'four.example',
    'one.example',
    'three.example'
  ])
})

test('every failure keeps the last good copy and is counted in the state', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-lists-')
  const good = 'a.example\nb.example\n'
  const server = await startListServer(t, { kind: 'list', body: good })
  const r = refresher(store, { 'max-bytes': 200, timeout: 1 })
  const src = source(server.url)
  const policy = policyOf(store)
  await r.refresh(src, false)
  const cases: Array<[string, typeof server.mode, RegExp]> = [
    ['500', { kind: 'status', status: 500 }, /HTTP 500/],
    ['truncated', { kind: 'truncated', body: 'a.example\n', announced: 100 }, /terminated|closed|other side/i],
    ['oversized (announced)', { kind: 'list', body: 'x.example\n'.repeat(30) }, /larger than 200 bytes/],
    ['oversized (chunked)', { kind: 'list', body: 'x.example\n'.repeat(30), chunked: true }, /larger than 200 bytes/],
    ['slow', { kind: 'stall' }, /no complete answer in 1000 ms/],
    ['not a list', { kind: 'list', body: '<html>\n<body>\nerror\n</body>\n' }, /4 of 4 lines invalid/],
    ['empty', { kind: 'list', body: '# nothing today\n' }, /no entries where the last good one held 2/]
  ]
  let errors = 0
  for (const [what, mode, why] of cases) {
    server.mode = mode
    const out = await r.refresh(src, true)
    errors++
    t.assert.strictEqual(out.status, 'failed', what)
    t.assert.match((out as { error: string }).error, why, what)
    const state = sourceState(store, 'ads')!
    t.assert.strictEqual(state.errors, errors, what)
    t.assert.strictEqual(state.consecutiveErrors, errors, what)
    t.assert.strictEqual(state.entries, 2, what)
    // Retried after lists.retry (60 s, plus jitter), not after the interval.
    t.assert.ok(state.nextDue <= state.lastAttempt + 66_000, what)
    t.assert.deepStrictEqual([...currentEntries(store, 'ads').keys()].sort(), ['a.example', 'b.example'], what)
    t.assert.strictEqual(judge(policy, 'b.example').action, 'block', what)
  }
  server.mode = { kind: 'list', body: good }
  t.assert.strictEqual((await r.refresh(src, true)).status, 'changed')
  t.assert.strictEqual(sourceState(store, 'ads')!.consecutiveErrors, 0)
})

test('a category target; a changed target moves the entries; removal takes them out', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-lists-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING] })
  await addUser(store, { name: 'kid', ip: ['10.1.1.1'], filter: [CATEGORY.GAMBLING] })
  const server = await startListServer(t, { kind: 'list', body: '0.0.0.0 bet.example\n0.0.0.0 casino.example\n' })
  const r = refresher(store)
  const policy = policyOf(store)
  const src = source(server.url, { format: 'hosts', target: 'category', category: CATEGORY.GAMBLING })
  await r.refresh(src, false)
  const v = judge(policy, 'www.bet.example', '10.1.1.1')
  t.assert.strictEqual(v.action, 'block')
  t.assert.strictEqual(v.reason, 'category')
  t.assert.deepStrictEqual(v.blockedCats, [CATEGORY.GAMBLING])
  // The database's own category and the list's are one, not repeated.
  t.assert.deepStrictEqual(judge(policy, 'casino.example', '10.1.1.1').blockedCats, [CATEGORY.GAMBLING])
  t.assert.strictEqual(judge(policy, 'bet.example').action, 'forward')

  const out = await r.refresh({ ...src, target: 'whitelist' }, false)
  t.assert.deepStrictEqual(out, { status: 'changed', entries: 2, added: 0, removed: 0, moved: 2 })
  t.assert.strictEqual(judge(policy, 'bet.example', '10.1.1.1').reason, 'global-whitelist')

  t.assert.strictEqual(await removeSource(store, 'ads'), 2)
  t.assert.strictEqual(judge(policy, 'bet.example', '10.1.1.1').action, 'forward')
  t.assert.strictEqual(sourceState(store, 'ads'), undefined)
})

test('a restart keeps the entries and the validators; the tick fetches only what is due', async (t: TestContext) => {
  const { store, path } = tempStore(t, 'filterd-lists-')
  const server = await startListServer(t, { kind: 'list', body: 'kept.example\n', etag: '"k"' })
  let now = Date.now()
  await refresher(store, {}, () => now).refresh(source(server.url), false)
  await store.close()
  const again = Store.open(path)
  t.after(async () => {
    await again.close()
  })
  t.assert.strictEqual(judge(policyOf(again), 'kept.example').action, 'block')
  const r = new ListRefresher({
    store: again,
    settings: SETTINGS,
    configSources: [source(server.url)],
    logger: silentLogger(),
    now: () => now
  })
  await r.tick()
  t.assert.strictEqual(server.requests.length, 1, 'not due yet: no request')
  now += 4000 * 1000
  await r.tick()
  t.assert.strictEqual(server.requests.length, 2)
  t.assert.deepStrictEqual(server.requests[1], { ifNoneMatch: '"k"' })
  t.assert.strictEqual(sourceState(again, 'ads')!.lastSuccess, now)
})

test('a source no longer defined has its entries removed by the tick', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-lists-')
  const server = await startListServer(t, { kind: 'list', body: 'gone.example\n' })
  await refresher(store).refresh(source(server.url), false)
  const policy = policyOf(store)
  t.assert.strictEqual(judge(policy, 'gone.example').action, 'block')
  await refresher(store).tick()
  t.assert.strictEqual(judge(policy, 'gone.example').action, 'forward')
  t.assert.strictEqual(currentEntries(store, 'ads').size, 0)
})

test('a difference applied twice (a second host, a write computed again) records only what it changed', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-lists-')
  const policy = policyOf(store)
  const changes: EntryChange[] = [
    ['x.example', null, 'black'],
    ['y.example', null, 'black']
  ]
  await store.write((w) => writeChanges(w, 'ads', changes))
  t.assert.strictEqual(judge(policy, 'x.example').action, 'block')
  const rev = (store.getSubscriptionValue(REV_KEY) as RevRecord).rev
  // The same changes again: nothing is written, the revision stays, the policy's counts too.
  await store.write((w) => writeChanges(w, 'ads', changes))
  t.assert.strictEqual((store.getSubscriptionValue(REV_KEY) as RevRecord).rev, rev)
  await store.write((w) => writeChanges(w, 'ads', [['x.example', 'black', null]]))
  t.assert.strictEqual(judge(policy, 'x.example').action, 'forward')
  t.assert.strictEqual(judge(policy, 'y.example').action, 'block')
})
