// What a config reload means for each role: the changed keys it reads, split into live and restart by
// the schema's x-roles / x-live annotations; the config it then runs is the old one with the live keys.
import { test, type TestContext } from 'node:test'
import { changedKeys, keyUses, mergeLive, planReload } from './index.js'
import { parseConfig } from '../features.js'

const load = (text: string): ReturnType<typeof parseConfig> => parseConfig(text, '/etc/filterd/filterd.yaml')

test('a reload plan names, per role, the changed keys it applies live and those needing its restart', (t: TestContext) => {
  const old = load('dnscache:\n  forward: [10.0.0.1]\nproxy:\n  listen: [0.0.0.0:53]\n')
  const next = load(
    'dnscache:\n  forward: [10.0.0.2]\nproxy:\n  listen: [0.0.0.0:5353]\n  rate-limit: 100\napi:\n  access: [allow all]\ncommon:\n  log-level: warn\n'
  )
  t.assert.deepStrictEqual(changedKeys(old, next), [
    'dnscache.forward',
    'proxy.listen',
    'proxy.rate-limit',
    'api.access',
    'common.log-level'
  ])
  t.assert.deepStrictEqual(planReload('dns', old, next), {
    live: ['dnscache.forward', 'proxy.rate-limit', 'common.log-level'],
    restart: ['proxy.listen']
  })
  t.assert.deepStrictEqual(planReload('catapi', old, next), {
    live: ['common.log-level'],
    restart: ['dnscache.forward']
  })
  t.assert.deepStrictEqual(planReload('blockpage', old, next), {
    live: ['api.access', 'common.log-level'],
    restart: []
  })
  const merged = mergeLive(old, next, planReload('dns', old, next).live)
  t.assert.deepStrictEqual(
    [merged.dnscache.forward, merged.proxy.listen, merged.proxy['rate-limit'], merged.common['log-level']],
    [['10.0.0.2'], ['0.0.0.0:53'], 100, 'warn']
  )
  t.assert.ok(Object.isFrozen(merged.proxy))
})

test('every key a role applies live is one that role reads', (t: TestContext) => {
  for (const u of keyUses())
    for (const r of u.live) t.assert.ok(u.roles.includes(r), `${u.key}: ${r} applies it live but does not read it`)
})
