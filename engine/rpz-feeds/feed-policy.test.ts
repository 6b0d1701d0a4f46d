// RPZ in as a policy layer: where the feeds sit among the verdict's steps (after the global lists,
// before everything of the user), passthru, the overrides and the category, and the config checks.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATEGORY } from '../categories/index.js'
import { CategoryDb } from '../catdb/index.js'
import { parseConfig } from '../features.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { tempDir } from '../testing/temp.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from '../policy/index.js'
import { RpzFeeds } from './feed-set.js'
import { feedSettings } from './feed-config.js'

const LIMITS = { maxRecords: 1000, maxBytes: 1 << 20, fileRefresh: 300, timeoutMs: 5000 }

async function feedsOf(
  t: TestContext,
  zones: Array<{ zone: string; text: string; action?: string; category?: number }>
) {
  const dir = tempDir(t, 'filterd-feed-')
  const settings = zones.map((z) => {
    const file = join(dir, `${z.zone}.zone`)
    writeFileSync(file, `$ORIGIN ${z.zone}.\n@ 60 SOA ns. admin. 1 60 60 600 60\n${z.text}`)
    return {
      zone: z.zone,
      file,
      action: (z.action ?? 'zone') as 'zone',
      category: z.category ?? null
    }
  })
  const feeds = new RpzFeeds(settings, LIMITS)
  t.after(() => feeds.close())
  await feeds.start()
  return feeds
}

test('the feeds come after the global lists and before the user: passthru hands on to the user steps', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-policy-')
  await buildCats(store, { 'casino.example': [CATEGORY.GAMBLING] })
  await store.write((w) => {
    w.putList(null, 'white', ['fixed.example'])
    w.putList(null, 'black', ['global.example'])
  })
  await addUser(
    store,
    { name: 'alice', ip: ['10.0.0.1'], filter: [CATEGORY.GAMBLING] },
    { white: ['feed.example'], black: ['mine.example'] }
  )
  await addUser(store, { name: 'off', ip: ['10.0.0.2'], status: 'disabled' })
  const feeds = await feedsOf(t, [
    {
      zone: 'first.rpz',
      text: 'casino.example CNAME rpz-passthru.\nmine.example CNAME rpz-passthru.\nfixed.example CNAME .\n'
    },
    {
      zone: 'second.rpz',
      text: 'feed.example CNAME .\ncasino.example CNAME .\nglobal.example CNAME *.\n32.9.0.0.10.rpz-client-ip CNAME .\n'
    }
  ])
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    feeds
  })
  const judge = (address: string, name: string): Verdict => policy.evaluate(address, new HostKeys(name), new Verdict())

  assert.equal(judge('10.0.0.1', 'fixed.example').reason, 'global-whitelist', 'the global whitelist corrects a feed')
  assert.equal(judge('10.0.0.1', 'global.example').reason, 'global-blacklist')
  const feed = judge('10.0.0.1', 'feed.example')
  assert.deepEqual(
    [feed.action, feed.reason, feed.matched, feed.rpz?.zone],
    ['block', 'rpz', 'feed.example', 'second.rpz']
  )
  assert.equal(judge('10.0.0.2', 'feed.example').reason, 'rpz', 'a disabled user is still under the feeds')
  const casino = judge('10.0.0.1', 'casino.example')
  assert.deepEqual(
    [casino.reason, casino.rpz?.zone],
    ['category', 'first.rpz'],
    'passthru: the first zone wins, then the user'
  )
  assert.equal(judge('10.0.0.1', 'mine.example').reason, 'user-blacklist')
  assert.equal(judge('10.0.0.1', 'other.example').reason, 'none')
  assert.equal(judge('10.0.0.9', 'other.example').reason, 'rpz', 'CLIENT-IP')
  assert.equal(judge('10.0.0.9', 'other.example').rpz?.trigger, 'client-ip 10.0.0.9')
})

test('an override and a category: the block answer and blockedCats; passthru as override enforces nothing', async (t: TestContext) => {
  const feeds = await feedsOf(t, [
    { zone: 'log.rpz', text: 'watched.example CNAME .\n', action: 'passthru' },
    { zone: 'cat.rpz', text: 'watched.example CNAME .\nlocal.example A 192.0.2.7\n', action: 'block', category: 12 }
  ])
  assert.deepEqual(feeds.match('watched.example', '')?.action, { kind: 'passthru' })
  assert.deepEqual(feeds.match('local.example', ''), {
    zone: 'cat.rpz',
    trigger: 'local.example',
    action: { kind: 'block' },
    category: 12
  })
  const { store } = tempStore(t, 'filterd-policy-')
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    feeds
  })
  const v = policy.evaluate('10.0.0.1', new HostKeys('local.example'), new Verdict())
  assert.deepEqual([v.reason, v.blockedCats], ['rpz', [12]])
  assert.equal(policy.evaluate('10.0.0.1', new HostKeys('watched.example'), new Verdict()).reason, 'none')
})

test('rpz-feeds in the config: a bad feed stops the start naming its key', () => {
  const bad = (yaml: string, why: RegExp): void => assert.throws(() => parseConfig(yaml, '/etc/filterd/x.yaml'), why)
  bad('rpz-feeds:\n  feeds:\n    - zone: a.rpz\n', /rpz-feeds\.feeds\[0\]: needs exactly one of file and primary/)
  bad(
    'rpz-feeds:\n  feeds:\n    - { zone: a.rpz, file: a.zone, primary: "127.0.0.1:53" }\n',
    /rpz-feeds\.feeds\[0\]: needs exactly one/
  )
  bad('rpz-feeds:\n  feeds:\n    - { zone: a.rpz, primary: "nohost:x" }\n', /rpz-feeds\.feeds\[0\]\.primary/)
  bad(
    'rpz-feeds:\n  feeds:\n    - { zone: a.rpz, primary: "127.0.0.1:53", tsig-key: { name: k, algorithm: hmac-foo, secret: c2VjcmV0 } }\n',
    /rpz-feeds\.feeds\[0\]\.tsig-key: unknown TSIG algorithm/
  )
  bad(
    'rpz-feeds:\n  feeds:\n    - { zone: a.rpz, file: a }\n    - { zone: A.rpz., file: b }\n',
    /rpz-feeds\.feeds\[1\]\.zone: "A\.rpz\." is taken in by an earlier feed/
  )
  bad('rpz-feeds:\n  feeds:\n    - { zone: a.rpz, file: a, action: maybe }\n', /action/)
  // The feeds are read from the store by every process that judges: pool workers and several front processes too.
  const pooled = parseConfig(
    'proxy:\n  dispatch: pool\n  processes: 2\nrpz-feeds:\n  feeds:\n    - { zone: a.rpz, file: a }\n',
    '/etc/filterd/x.yaml'
  )
  assert.equal(pooled['rpz-feeds'].feeds.length, 1)
  const c = parseConfig(
    'rpz-feeds:\n  feeds:\n    - { zone: A.rpz., file: a.zone, category: 3 }\n    - { zone: b.rpz, primary: "127.0.0.1:5353", tsig-key: { name: k, secret: c2VjcmV0 } }\n',
    '/etc/filterd/x.yaml'
  )
  const s = feedSettings(c['rpz-feeds'])
  assert.deepEqual(s[0], { zone: 'a.rpz', file: '/etc/filterd/a.zone', action: 'zone', category: 3 })
  assert.deepEqual(s[1]?.primary, { host: '127.0.0.1', port: 5353 })
  assert.equal(s[1]?.key?.algorithm, 'hmac-sha256')
})
