// The store's copy of a feed (engine/rpz-feeds/feed-store.ts) against the feed it was written from: a
// reader on another, read-only handle of the same LMDB store answers every name and client as the
// feed in memory does, after a whole load, after an IXFR written as changes, and after a reload that
// moves to a new version (the version two loads back is removed).
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { Store } from '../store/index.js'
import { tempDir } from '../testing/temp.js'
import { FeedZone, type FeedStep } from './feed.js'
import { FeedStoreWriter, StoredFeeds } from './feed-store.js'
import { loadingStatus } from './follower.js'
import { parseZoneFile } from '../rpz-zones/zonefile.js'

const HEAD = '$ORIGIN f.rpz.\n@ 60 SOA ns. admin. 1 60 60 600 60\n@ NS localhost.\n'
const BODY =
  'a.example CNAME .\n*.b.example CNAME *.\nc.example A 192.0.2.1\nc.example AAAA 2001:db8::1\n' +
  'g1.example CNAME garden.example.\ng2.example CNAME garden.example.\n* CNAME rpz-passthru.\n' +
  '24.0.2.0.192.rpz-client-ip CNAME .\nns.x.rpz-nsdname CNAME .\n'
const NAMES = ['a.example', 'x.a.example', 'b.example', 'x.y.b.example', 'c.example', 'g2.example', 'other.example']
const CLIENTS = ['', '10.0.0.1', '192.0.2.7']

const report = (feed: FeedZone) => ({
  ...loadingStatus('f.rpz'),
  state: 'ok' as const,
  serial: feed.serial,
  unsupported: 1
})

function assertSame(stored: StoredFeeds, feed: FeedZone, what: string): void {
  for (const name of NAMES)
    for (const client of CLIENTS) {
      const m = feed.match(name, client === '' ? undefined : client)
      const s = stored.match(name, client)
      assert.deepEqual(
        s === undefined ? undefined : { action: s.action, trigger: s.trigger },
        m === undefined ? undefined : { action: m.action, trigger: m.trigger },
        `${what}: ${name} from ${client || 'no client'}`
      )
    }
}

test('a reader of the store enforces what the feed in memory does: whole loads, IXFR changes, new versions', async (t: TestContext) => {
  const path = join(tempDir(t, 'filterd-feed-store-'), 'db')
  const store = Store.open(path)
  t.after(() => store.close())
  const writer = new FeedStoreWriter(store)
  const settings = [{ zone: 'f.rpz', action: 'zone' as const, category: null }]
  const feed = FeedZone.fromRecords('f.rpz', parseZoneFile(HEAD + BODY, 'f.rpz'))
  await writer.update(feed, 'whole', report(feed))

  const reader = Store.open(path, { readOnly: true })
  t.after(() => reader.close())
  const stored = new StoredFeeds(reader, settings)
  assertSame(stored, feed, 'whole load')
  assert.equal(stored.reports()[0]?.serial, 1)

  const rec = (name: string, type: number, data: string) => ({ name: `${name}.f.rpz`, type, ttl: 60, data })
  const steps: FeedStep[] = [
    {
      from: 1,
      to: 2,
      deleted: [rec('a.example', 5, ''), rec('c.example', 1, '192.0.2.1'), rec('24.0.2.0.192.rpz-client-ip', 5, '')],
      added: [rec('*.a.example', 5, 'rpz-drop'), rec('32.1.0.0.10.rpz-client-ip', 5, 'rpz-passthru')]
    }
  ]
  const generation = reader.generation()
  await writer.update(feed, feed.applySteps(steps), report(feed))
  assert.ok(reader.generation() > generation, 'the new serial moves the generation')
  stored.refresh()
  assertSame(stored, feed, 'after an IXFR')
  assert.equal(stored.match('x.a.example', '')?.action.kind, 'drop')

  // Two more whole loads: version 3 enforced, version 1 gone from the table.
  for (const serial of [3, 4]) {
    const next = FeedZone.fromRecords('f.rpz', parseZoneFile(HEAD.replace(' 1 60', ` ${serial} 60`) + BODY, 'f.rpz'))
    await writer.update(next, 'whole', report(next))
    stored.refresh()
    assertSame(stored, next, `whole load of serial ${serial}`)
  }
  const versions = new Set<number>()
  for (const key of store.root.openDB({ name: 'rpz-feeds' }).getKeys()) versions.add((key as [string, number])[1])
  assert.deepEqual([...versions].sort(), [0, 2, 3], 'the status, the version enforced and the one before')

  // An expired feed: nothing enforced.
  await writer.update(undefined, null, { ...report(feed), state: 'expired' })
  stored.refresh()
  assert.equal(stored.match('a.example', ''), undefined)
})

test('the serial the store enforces, loaded whole again (a restart), writes nothing; a failure before the first load keeps the copy, expiry drops it', async (t: TestContext) => {
  const store = Store.open(join(tempDir(t, 'filterd-feed-store-'), 'db'))
  t.after(() => store.close())
  const writer = new FeedStoreWriter(store)
  const settings = [{ zone: 'f.rpz', action: 'zone' as const, category: null }]
  const feed = FeedZone.fromRecords('f.rpz', parseZoneFile(HEAD + BODY, 'f.rpz'))
  await writer.update(feed, 'whole', report(feed))
  const generation = store.generation()

  // The same serial, transferred whole by a process that just started: no new version, no new generation.
  const again = FeedZone.fromRecords('f.rpz', parseZoneFile(HEAD + BODY, 'f.rpz'))
  await writer.update(again, 'whole', report(again))
  assert.equal(store.generation(), generation, 'nothing written')
  assert.ok(writer.holds('f.rpz'))

  // A process whose first transfer failed (the primary away) holds no feed: the store's copy stays.
  await writer.update(undefined, null, { ...loadingStatus('f.rpz'), state: 'failing', unsupported: 0 })
  const stored = new StoredFeeds(store, settings)
  assertSame(stored, feed, 'after a failed first load')
  // Expired: enforced no more.
  await writer.update(undefined, null, { ...report(feed), state: 'expired' })
  assert.equal(writer.holds('f.rpz'), false)
  stored.refresh()
  assert.equal(stored.match('a.example', ''), undefined)
})
