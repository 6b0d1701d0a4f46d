// GET /check/{domain}: a name blocked (or let through) by a list subscription or an RPZ feed names its
// source (`list:<id>`, `rpz:<zone>`), beside the step the spec's clients read; the operator's own lists
// and the category database name none.
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATEGORY } from '../engine/categories/index.js'
import { startListServer } from '../engine/testing/list-server.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { call, startApi } from './testing/fixtures.js'

test('check names the subscription or the feed that gave the deciding entry', async (t: TestContext) => {
  const { dir, cleanup } = makeTempDir('filterd-check-source-')
  t.after(cleanup)
  const zone = join(dir, 'feed.rpz.zone')
  writeFileSync(zone, '$ORIGIN feed.rpz.\n@ 60 SOA ns. admin. 1 60 60 600 60\nmalware.example CNAME .\n')
  const api = await startApi({ configYaml: `rpz-feeds:\n  feeds:\n    - { zone: feed.rpz, file: ${zone} }` })
  t.after(() => api.close())
  const ads = await startListServer(t, { kind: 'list', body: 'ads.example\n' })
  const games = await startListServer(t, { kind: 'list', body: 'games.example\n' })
  for (const [id, body] of [
    ['ads', { url: ads.url, format: 'domains', target: 'blacklist' }],
    ['games', { url: games.url, format: 'domains', target: 'category', category: CATEGORY.SOCIAL_NETWORKS }]
  ] as const) {
    const put = await call(api.base, 'PUT', `/subscriptions/${id}`, body)
    t.assert.strictEqual(put.status, 201, JSON.stringify(put.body))
    t.assert.strictEqual((await call(api.base, 'POST', `/subscriptions/${id}/refresh`)).status, 200)
  }
  await call(api.base, 'PUT', '/users/kid', { ip: ['10.0.0.1'], filter: [CATEGORY.SOCIAL_NETWORKS] })
  await call(api.base, 'PUT', '/blacklist/', ['own.example'])
  const at = async (name: string): Promise<unknown[]> => {
    const b = (await call(api.base, 'GET', `/check/${name}?ip=10.0.0.1`)).body as Record<string, unknown>
    return [b.step, b.matched, b.source]
  }
  t.assert.deepStrictEqual(await at('www.ads.example'), ['global-blacklist', 'ads.example', 'list:ads'])
  t.assert.deepStrictEqual(await at('games.example'), ['category', 'games.example', 'list:games'])
  t.assert.deepStrictEqual(await at('malware.example'), ['rpz', 'malware.example', 'rpz:feed.rpz'])
  // The operator's own list: no source, and the field is left out.
  t.assert.deepStrictEqual(await at('own.example'), ['global-blacklist', 'own.example', undefined])
})
