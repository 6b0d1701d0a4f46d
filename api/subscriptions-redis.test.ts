// List subscriptions on two hosts sharing one Redis: two api processes (each with its sync role and
// its own LMDB replica) refresh the same config source; one host fetches it under the claim, and
// the entries it writes reach the other host through the shared store. A changed list refreshed on
// the other host reaches the first the same way, as its difference.
import { test, type TestContext } from 'node:test'
import { startListServer } from '../engine/testing/list-server.js'
import { startRedis } from '../engine/testing/redis.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { fetchJson as json, until } from '../engine/testing/wait.js'
import { defineHost, type Host, type Topology } from '../sync/testing/topology.js'

const loopback: Topology = {
  kind: 'loopback',
  hostAddress: () => '127.0.0.1',
  clientAddress: () => '127.0.0.1',
  peerAddress: () => '127.0.0.1',
  redisAddressFor: () => '127.0.0.1',
  redisBind: ['127.0.0.1'],
  prefix: () => [],
  cleanup: () => {}
}

interface Sub {
  state: { entries: number; host?: string; lastChange: number } | null
}

const subOf = async (h: Host): Promise<Sub> => (await json(`${h.apiUrl}/subscriptions/shared`)).body as Sub
const verdictOf = async (h: Host, name: string): Promise<string> =>
  ((await json(`${h.apiUrl}/check/${name}?ip=10.7.7.7`)).body as { step: string }).step

test('with Redis one host fetches a list and every host enforces it', { timeout: 150_000 }, async (t: TestContext) => {
  const { dir: root, cleanup } = makeTempDir('filterd-lists-redis-')
  const redis = await startRedis()
  t.after(async () => {
    await redis.stop()
    cleanup()
  })
  const server = await startListServer(t, { kind: 'list', body: 'one.example\ntwo.example\n', etag: '"a"' })
  const lists = { sources: [{ id: 'shared', url: server.url, format: 'domains', target: 'blacklist' }] }
  const hosts = [
    await defineHost(loopback, 1, root, redis.port, { lists }),
    await defineHost(loopback, 2, root, redis.port, { lists })
  ]
  for (const h of hosts) {
    t.after(async () => {
      await h.stop()
    })
    await h.start('sync')
    await until('the replica following', async () => (await json(`${h.syncUrl}/health`)).body?.state === 'following')
  }
  await Promise.all(hosts.map(async (h) => await h.start('api')))
  for (const h of hosts) {
    await until(`host${h.index} holding the list`, async () => (await subOf(h)).state?.entries === 2, 60_000, 200)
    t.assert.strictEqual(await verdictOf(h, 'www.two.example'), 'global-blacklist')
  }
  // Both refreshers ran at least two passes meanwhile (5 s apart): the claim let one of them fetch.
  await new Promise((resolve) => setTimeout(resolve, 11_000))
  t.assert.strictEqual(server.requests.length, 1)
  const fetcher = (await subOf(hosts[0]!)).state!.host!
  t.assert.ok(fetcher === 'host1' || fetcher === 'host2', fetcher)
  t.assert.strictEqual((await subOf(hosts[1]!)).state!.host, fetcher)

  // The other host refreshes a changed list now; the first host applies its difference.
  server.mode = { kind: 'list', body: 'two.example\nthree.example\n', etag: '"b"' }
  const other = fetcher === 'host1' ? hosts[1]! : hosts[0]!
  const first = fetcher === 'host1' ? hosts[0]! : hosts[1]!
  const r = await json(`${other.apiUrl}/subscriptions/shared/refresh`, 'POST')
  t.assert.deepStrictEqual(r.body, { status: 'changed', entries: 2, added: 1, removed: 1, moved: 0 })
  await until(
    'the first host enforcing three.example',
    async () => (await verdictOf(first, 'three.example')) === 'global-blacklist',
    30_000,
    200
  )
  t.assert.strictEqual(await verdictOf(first, 'one.example'), 'none')
  t.assert.strictEqual((await subOf(first)).state!.host, other.index === 1 ? 'host1' : 'host2')
  const metrics = await (await fetch(`${first.apiUrl}/metrics`)).text()
  t.assert.match(metrics, /^filterd_list_entries\{source="shared"\} 2$/m)
})
