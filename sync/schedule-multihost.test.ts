/**
 * Schedules with Redis: two DNS hosts share one policy through one Redis, and each switches a
 * scheduled rule at the boundary second of its own clock (FILTERD_TEST_CLOCK_FILE, one file per host).
 * With both clocks at 21:59:59 neither blocks; host A's clock at 22:00:00 blocks on A while B, still at
 * 21:59:59, does not; B's clock at 22:00:00 blocks on B; both block answers' TTLs end at 07:00. No
 * Redis traffic is needed at the boundary: the rule came with the policy, the switch is local.
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../engine/categories/index.js'
import { TEST_CLOCK_ENV, type ScheduledRule } from '../engine/schedule/index.js'
import { redisServerAvailable, startRedis } from '../engine/testing/redis.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { fetchJson as json, until } from '../engine/testing/wait.js'
import { createTopology, defineHost, type Host } from './testing/topology.js'

const BLOCK = '192.0.2.80'

/** dig's first A record (TTL and data) asked of `server` from `from`, or the failure. */
async function dig(server: string, port: number, from: string, name: string): Promise<{ ttl: number; data: string }> {
  return await new Promise((resolve, reject) => {
    execFile(
      'dig',
      ['+noall', '+answer', '+tries=1', '+time=2', '-b', from, '-p', String(port), `@${server}`, name, 'A'],
      { timeout: 10_000 },
      (err, stdout) => {
        if (err !== null && (err as { code?: unknown }).code === 'ENOENT') {
          reject(new Error('dig is not installed'))
          return
        }
        const line = stdout.split('\n').find((l) => /\sIN\s+A\s/.test(l))
        const f = line?.trim().split(/\s+/) ?? []
        resolve(line === undefined ? { ttl: -1, data: '' } : { ttl: Number(f[1]), data: f[4] ?? '' })
      }
    )
  })
}

const NIGHTS: ScheduledRule = {
  name: 'school nights',
  timezone: 'Europe/Berlin',
  windows: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' }],
  filter: [CATEGORY.SOCIAL_NETWORKS],
  blacklist: ['games.example']
}

test(
  'two DNS hosts sharing a policy through Redis each switch a schedule at the boundary of their own clock',
  { timeout: 150_000, skip: redisServerAvailable() ? false : 'redis-server is not installed' },
  async (t: TestContext) => {
    const topo = createTopology(2)
    t.after(() => {
      topo.cleanup()
    })
    const { dir: root, cleanup } = makeTempDir('filterd-sched-multihost-')
    const redis = await startRedis({ bind: topo.redisBind.join(' ') })
    const hosts: Host[] = []
    t.after(async () => {
      await Promise.all(
        hosts.map(async (h) => {
          await h.stop()
        })
      )
      await redis.stop()
      cleanup()
    })
    // The block answer's TTL is 3600 (proxy.ttl) unless a boundary comes sooner.
    for (const i of [1, 2]) hosts.push(await defineHost(topo, i, root, redis.port, { proxy: { ttl: 3600 } }))
    const [a, b] = hosts as [Host, Host]
    const clocks = hosts.map((h) => join(h.dir, 'clock'))
    const setClock = (h: Host, iso: string): void => {
      writeFileSync(clocks[h.index - 1]!, iso)
    }
    // Thursday 2026-11-26, 21:59:59 in Berlin (CET, UTC+1): one second before the window opens.
    const BEFORE = '2026-11-26T20:59:59Z'
    const AT = '2026-11-26T21:00:00Z'
    for (const h of hosts) setClock(h, BEFORE)
    for (const h of hosts) {
      const env = { [TEST_CLOCK_ENV]: clocks[h.index - 1]! }
      await h.start('sync', undefined, { env })
      await until(
        `host${h.index} following`,
        async () => (await json(`${h.syncUrl}/health`)).body?.state === 'following'
      )
    }
    await a.start('api', undefined, { env: { [TEST_CLOCK_ENV]: clocks[0]! } })
    for (const h of hosts) await h.start('dns', undefined, { env: { [TEST_CLOCK_ENV]: clocks[h.index - 1]! } })

    const ask = async (h: Host, name: string): Promise<{ ttl: number; data: string }> =>
      await dig(h.address, h.dnsPort, topo.clientAddress(h.index), name)
    // One API write on A; `always.example` (always blacklisted) shows when each host has the policy.
    const put = await json(`${a.apiUrl}/users/kid`, 'PUT', {
      ip: [topo.clientAddress(1), topo.clientAddress(2)],
      blacklist: ['always.example'],
      schedules: [NIGHTS]
    })
    t.assert.strictEqual(put.status, 200, JSON.stringify(put.body))
    for (const h of hosts)
      await until(
        `host${h.index} enforcing the policy written on A`,
        async () => (await ask(h, 'always.example')).data === BLOCK
      )

    // 21:59:59 on both: the scheduled name is not blocked.
    for (const h of hosts)
      t.assert.notStrictEqual((await ask(h, 'games.example')).data, BLOCK, `host${h.index} 21:59:59`)
    // A's clock reaches 22:00:00, B's does not: each host decides by its own clock.
    setClock(a, AT)
    const onA = await ask(a, 'games.example')
    t.assert.deepStrictEqual(onA, { ttl: 3600, data: BLOCK }, 'A at 22:00:00 blocks, until 07:00 capped by proxy.ttl')
    t.assert.notStrictEqual((await ask(b, 'games.example')).data, BLOCK, 'B still at 21:59:59')
    setClock(b, AT)
    t.assert.deepStrictEqual(await ask(b, 'games.example'), { ttl: 3600, data: BLOCK }, 'B at 22:00:00 blocks')
    // Near the end of the window, both block with a TTL that ends at 07:00 Berlin (06:00 UTC).
    for (const h of hosts) setClock(h, '2026-11-27T05:59:30Z')
    for (const h of hosts)
      t.assert.deepStrictEqual(await ask(h, 'games.example'), { ttl: 30, data: BLOCK }, `host${h.index} at 06:59:30`)
    for (const h of hosts) setClock(h, '2026-11-27T06:00:00Z')
    for (const h of hosts) t.assert.notStrictEqual((await ask(h, 'games.example')).data, BLOCK, `host${h.index} 07:00`)
  }
)
