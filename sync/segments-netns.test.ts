/**
 * Statistics segments between three hosts, each in its own network namespace,
 * one real Redis holding metadata only. Hosts 1 and 2 run sync, api and dns (report hosts); host 3 is
 * DNS-only (sync and dns). dave owns the client address of every host; every report host must sum his
 * queries on all three exactly once, through these faults:
 *
 *   a transfer killed midway   host 2's api role stopped (SIGKILL) with half a segment written
 *                              (the replica.segment-fetch.pause failpoint): restarted, it discards the half file and
 *                              fetches the segment again;
 *   a segment fetched twice    one of host 3's segments registered again under a new seq: both report
 *                              hosts fetch it again and count it once;
 *   a host away past retention host 2's api role stopped while host 3's segments of the time expire
 *                              (stats.segments-retention 60 s): back, it reports the gap on /health and
 *                              /metrics; restored from host 1's statistics store (the documented way),
 *                              it counts everything once.
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { connectSharedStore, whenReady } from '../engine/replica/redis.js'
import { segmentKeys } from '../engine/replica/segments.js'
import { startRedis } from '../engine/testing/redis.js'
import { testSettings } from '../engine/testing/replica.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { fetchJson as json, until } from '../engine/testing/wait.js'
import { createTopology, defineHost, type Host } from './testing/topology.js'
import { failpointEnv } from '../engine/failpoints.js'

async function dig(server: string, port: number, from: string, name: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile(
      'dig',
      ['+short', '+tries=1', '+time=2', '-b', from, '-p', String(port), `@${server}`, name, 'A'],
      { timeout: 10_000 },
      (err) => {
        if (err !== null && (err as { code?: unknown }).code === 'ENOENT') reject(new Error('dig is not installed'))
        else resolve()
      }
    )
  })
}

const RETENTION_S = 60

test(
  "three hosts' queries summed exactly once on every report host: a killed transfer, a segment fetched twice, a host away past retention",
  { timeout: 480_000 },
  async (t: TestContext) => {
    const topo = createTopology(3)
    t.after(() => {
      topo.cleanup()
    })
    t.diagnostic(topo.kind === 'netns' ? 'hosts in network namespaces' : 'hosts on loopback addresses (no netns)')
    const { dir: root, cleanup } = makeTempDir('filterd-segments-')
    const redis = await startRedis({ bind: topo.redisBind.join(' ') })
    const hosts: Host[] = []
    t.after(async () => {
      await Promise.all(hosts.map((h) => h.stop()))
      await redis.stop()
      cleanup()
    })
    for (let i = 1; i <= 3; i++)
      hosts.push(await defineHost(topo, i, root, redis.port, { stats: { 'segments-retention': RETENTION_S } }))
    const [a, b, c] = hosts as [Host, Host, Host]
    const r = connectSharedStore(testSettings('127.0.0.1', redis.port, 'filterd:'), { commandTimeout: 6000 })
    t.after(() => {
      r.disconnect()
    })
    await whenReady(r, 5000)
    const keys = segmentKeys('filterd:')

    for (const h of hosts) {
      await h.start('sync')
      await until(
        `host${h.index} following`,
        async () => (await json(`${h.syncUrl}/health`)).body?.state === 'following'
      )
      if (h !== c) await h.start('api')
      await h.start('dns')
    }
    const put = await json(`${a.apiUrl}/users/dave`, 'PUT', {
      ip: [topo.clientAddress(1), topo.clientAddress(2), topo.clientAddress(3)]
    })
    t.assert.strictEqual(put.status, 200, JSON.stringify(put.body))
    for (const h of [b, c])
      await until(
        `host${h.index} holding dave`,
        async () =>
          (await json(`${h.syncUrl}/health`)).body?.appliedSeq >= (await json(`${a.syncUrl}/health`)).body?.appliedSeq
      )
    await new Promise((resolve) => setTimeout(resolve, 300))

    let sent = 0
    const ask = async (h: Host, n: number, tag: string): Promise<void> => {
      for (let k = 0; k < n; k++) await dig(h.address, h.dnsPort, topo.clientAddress(h.index), `${tag}${k}.example`)
      sent += n
    }
    const day = new Date().toISOString().slice(0, 10)
    const requests = async (h: Host): Promise<number> => {
      const res = await json(`${h.apiUrl}/users/dave/stat/activity/day?from=${day}&to=${day}`)
      return res.status === 200 ? Number(res.body.datasets[0].data[0] ?? 0) : -1
    }
    const exactly = async (what: string, expected: Array<[Host, number]>): Promise<void> => {
      await until(
        what,
        async () => (await Promise.all(expected.map(([h]) => requests(h)))).every((n, k) => n >= expected[k]![1]),
        60_000
      )
      await new Promise((resolve) => setTimeout(resolve, 2500)) // a double count would show by now
      t.assert.deepStrictEqual(
        await Promise.all(expected.map(([h]) => requests(h))),
        expected.map(([, n]) => n),
        what
      )
    }

    // 1. Queries on all three hosts: each report host sums them once.
    await ask(a, 3, 'one')
    await ask(b, 2, 'two')
    await ask(c, 4, 'three')
    await exactly('both report hosts summing the three hosts', [
      [a, sent],
      [b, sent]
    ])
    const memory = Number(/used_memory:(\d+)/.exec(await r.info('memory'))![1])
    t.diagnostic(`Redis used_memory ${memory} bytes; stats keys: ${JSON.stringify(await r.hgetall(keys.hosts))}`)

    // 2. A transfer killed midway: host 2's api stops with half of host 1's new segment written.
    // Host 2's api restarted with the hook first (nothing new to fetch yet), then host 1 logs: host 2
    // fetches that segment and stops with half of it written.
    await b.procs.find((p) => p.role === 'api')!.stop()
    const paused = await b.start('api', undefined, { env: failpointEnv({ 'replica.segment-fetch.pause': '1' }) })
    await ask(a, 2, 'four')
    await until(
      'host2 paused mid-transfer',
      async () => paused.output.some((l) => l.startsWith('PAUSED fetch')),
      60_000
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; its output:\n${paused.output.join('\n')}`)
    })
    const incoming = join(b.dir, 'statsdb', 'incoming')
    t.assert.strictEqual(readdirSync(incoming).filter((n) => n.endsWith('.tmp')).length, 1, 'half a segment on disk')
    paused.proc.kill('SIGKILL')
    await new Promise((resolve) => paused.proc.once('exit', resolve))
    const again = await b.start('api')
    await exactly('the killed transfer fetched again, counted once', [
      [a, sent],
      [b, sent]
    ])
    t.assert.ok(
      again.output.some((l) => l.includes('removing a half-written segment')),
      'the half file discarded with a log line'
    )

    // 3. A segment fetched twice: host 3's first segment registered again under a new seq.
    const [first] = await r.zrange(keys.index('host3'), 0, 0)
    const meta = JSON.parse((await r.hget(keys.meta, first!))!) as Record<string, unknown>
    const seq = await r.hincrby(keys.hosts, 'host3', 1)
    await r.hset(keys.meta, first!, JSON.stringify({ ...meta, seq }))
    await r.zadd(keys.index('host3'), seq, first!)
    const duplicates = async (h: Host): Promise<number> =>
      Number(
        /^filterd_stats_segments_duplicate_total (\d+)/m.exec(await (await fetch(`${h.apiUrl}/metrics`)).text())?.[1] ??
          0
      )
    await until(
      'both report hosts fetching it again',
      async () => (await duplicates(a)) >= 1 && (await duplicates(b)) >= 1
    )
    await exactly('the segment fetched twice counted once', [
      [a, sent],
      [b, sent]
    ])

    // 4. Host 2's api away while host 3's segments of the time expire (retention 60 s).
    await b.procs
      .filter((p) => p.role === 'api')
      .at(-1)!
      .stop()
    const before = Number(await r.hget(keys.hosts, 'host3'))
    await ask(c, 3, 'five')
    await until('host3 registering the new segment', async () => Number(await r.hget(keys.hosts, 'host3')) > before)
    // The three rows may close in two files (a rotation between two queries): every segment that holds
    // them is registered once host 1 counts them all, and only then is the seq read that must expire.
    await until('host1 counting the new rows', async () => (await requests(a)) >= sent)
    const away = Number(await r.hget(keys.hosts, 'host3'))
    await until(
      "host3's segments of the time expired",
      async () => {
        const oldest = await r.zrange(keys.index('host3'), 0, 0, 'WITHSCORES')
        return oldest.length === 0 || Number(oldest[1]) > away
      },
      (RETENTION_S + 30) * 1000
    )
    await b.start('api')
    await until('host2 reporting the gap on /health', async () =>
      JSON.stringify((await json(`${b.apiUrl}/health`)).body).includes('stats-gap')
    )
    const metrics = await (await fetch(`${b.apiUrl}/metrics`)).text()
    t.assert.match(metrics, /^filterd_stats_segment_gap_segments\{host="host3"\} [1-9]/m)
    await exactly('host1 counting everything, host2 all but the expired segments', [
      [a, sent],
      [b, sent - 3]
    ])

    // The documented way back: host 2's statistics store restored from host 1's.
    const apiA = a.procs.filter((p) => p.role === 'api').at(-1)!
    await apiA.stop()
    await b.procs
      .filter((p) => p.role === 'api')
      .at(-1)!
      .stop()
    rmSync(join(b.dir, 'statsdb'), { recursive: true, force: true })
    cpSync(join(a.dir, 'statsdb'), join(b.dir, 'statsdb'), { recursive: true })
    await a.start('api')
    await b.start('api')
    await ask(b, 1, 'six')
    await exactly('host2 restored from host1: every query once on both', [
      [a, sent],
      [b, sent]
    ])
    t.assert.ok(!JSON.stringify((await json(`${b.apiUrl}/health`)).body).includes('stats-gap'))
    t.assert.ok(existsSync(join(a.dir, 'stats', 'segments', 'host1')), "host1's segments kept in its segments folder")
  }
)
