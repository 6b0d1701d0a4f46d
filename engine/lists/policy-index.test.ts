// The subscriptions as the policy reads them, on a real store on disk: a name is listed when some
// source's entry lists it, whatever other names share its hash; a write's difference is followed
// without reading every entry again; the RPZ zones' name lists come from the store.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fnv1a, HostKeys } from '../names/index.js'
import { tempStore } from '../testing/store.js'
import { applyEntries, removeSource } from './apply.js'
import { SubscriptionIndex } from './policy-index.js'

/** Two different names with one 32-bit hash (a birthday search; a few hundred thousand names at most). */
function collidingNames(): [string, string] {
  const seen = new Map<number, string>()
  for (let i = 0; ; i++) {
    const name = `n${i}.example`
    const h = fnv1a(name)
    const other = seen.get(h)
    if (other !== undefined) return [other, name]
    seen.set(h, name)
  }
}

test('a name is listed only when a source lists it: a name sharing its hash is not', async (t) => {
  const { store } = tempStore(t, 'filterd-subindex-')
  const [listed, twin] = collidingNames()
  assert.equal(fnv1a(listed), fnv1a(twin))
  await applyEntries(store, 'a', new Set([listed, 'bad.example']), 'black')
  // 'a-b' sorts before 'a:' in the store's keys: each source is still found once.
  await applyEntries(store, 'a-b', new Set(['good.example']), 'white')
  await applyEntries(store, 'ab', new Set(['shop.example']), 7)
  const index = new SubscriptionIndex()
  index.refresh(store)
  assert.equal(index.firstBlack(new HostKeys(listed)), listed)
  assert.equal(index.firstBlack(new HostKeys(twin)), '', 'the twin shares the hash, not the entry')
  assert.equal(index.firstBlack(new HostKeys(`www.${twin}`)), '')
  assert.equal(index.firstBlack(new HostKeys('a.b.bad.example')), 'bad.example')
  assert.equal(index.firstWhite(new HostKeys('bad.example')), '', 'listed black, not white')
  assert.equal(index.firstWhite(new HostKeys('www.good.example')), 'good.example')
  assert.deepEqual(index.categoriesOf(new HostKeys('x.shop.example')), { key: 'shop.example', cats: [7] })
  assert.equal(index.categoriesOf(new HostKeys('good.example')), undefined)
  assert.equal(index.sourceOf(store, 'bad.example', 'black'), 'a')
  assert.equal(index.sourceOf(store, 'good.example', 'black'), '')
})

test("a write's difference is followed, and a name two sources list stays listed until both drop it", async (t) => {
  const { store } = tempStore(t, 'filterd-subindex-')
  await applyEntries(store, 'a', new Set(['both.example', 'only-a.example']), 'black')
  await applyEntries(store, 'b', new Set(['both.example']), 'black')
  const index = new SubscriptionIndex()
  index.refresh(store)
  const rev = index.revision
  await applyEntries(store, 'a', new Set(['only-a.example', 'new.example']), 'black')
  index.refresh(store)
  assert.equal(index.revision, rev + 1)
  assert.equal(index.firstBlack(new HostKeys('new.example')), 'new.example')
  assert.equal(index.firstBlack(new HostKeys('both.example')), 'both.example', 'b still lists it')
  assert.equal(index.sourceOf(store, 'both.example', 'black'), 'b')
  await removeSource(store, 'b')
  index.refresh(store)
  assert.equal(index.firstBlack(new HostKeys('both.example')), '')
  assert.deepEqual([...index.names('black')].sort(), ['new.example', 'only-a.example'])
  // A process that slept through several writes reads every entry again and agrees.
  await applyEntries(store, 'c', new Set(['only-a.example', 'c.example']), 'white')
  await applyEntries(store, 'd', new Set(['c.example']), 3)
  const late = new SubscriptionIndex()
  late.refresh(store)
  index.refresh(store)
  for (const idx of [index, late]) {
    assert.deepEqual([...idx.names('black')].sort(), ['new.example', 'only-a.example'])
    assert.deepEqual([...idx.names('white')].sort(), ['c.example', 'only-a.example'])
    assert.deepEqual([...idx.categoryNames()], [[3, ['c.example']]])
    assert.equal(idx.firstWhite(new HostKeys('www.c.example')), 'c.example')
    assert.equal(idx.size, 3, 'three names counted (only-a.example once, black and white)')
  }
})
