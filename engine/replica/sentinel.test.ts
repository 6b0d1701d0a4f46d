/**
 * Redis Sentinel: `common.redis-sentinels` and `common.redis-master-name`
 * instead of `common.redis-ip`. A real master, a replica (`--replicaof`) and one Sentinel
 * (`redis-server --sentinel`), each on a free port: a host writes and follows through the master
 * the Sentinel names; after a failover the Sentinel makes the replica master, and the same host
 * writes and follows through it without a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Redis } from 'ioredis'
import { parseConfig } from '../features.js'
import { silentLogger } from '../log/index.js'
import { Store } from '../store/index.js'
import { releasedPort } from '../testing/ports.js'
import { startRedis } from '../testing/redis.js'
import { addUser } from '../testing/store.js'
import { tempDir } from '../testing/temp.js'
import { sharedStoreSettings } from './redis.js'
import { linkStore } from '../testing/replica.js'
import { until } from '../testing/wait.js'

async function redisProcess(t: TestContext, args: string[], port: number): Promise<ChildProcess> {
  const proc = spawn('redis-server', args, { stdio: 'ignore' })
  t.after(async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = once(proc, 'exit')
    proc.kill('SIGKILL')
    await exited
  })
  const probe = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null
  })
  probe.on('error', () => {})
  await until(
    `redis-server on ${port}`,
    async () => {
      if (proc.exitCode !== null) throw new Error(`redis-server ${args.join(' ')} exited with ${proc.exitCode}`)
      try {
        await probe.connect()
        return (await probe.ping()) === 'PONG'
      } catch {
        probe.disconnect()
        return false
      }
    },
    10_000
  )
  probe.disconnect()
  return proc
}

test(
  'a host uses the master its Sentinels name, and follows it to the replica after a failover',
  { timeout: 90_000 },
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-sentinel-')
    const master = await startRedis()
    t.after(async () => {
      await master.stop()
    })
    const replicaPort = await releasedPort()
    await redisProcess(
      t,
      [
        '--port',
        String(replicaPort),
        '--bind',
        '127.0.0.1',
        '--dir',
        mkdtempSync(join(dir, 'r-')),
        '--save',
        '',
        '--appendonly',
        'no',
        '--replicaof',
        '127.0.0.1',
        String(master.port),
        '--protected-mode',
        'no',
        '--loglevel',
        'warning'
      ],
      replicaPort
    )
    const sentinelPort = await releasedPort()
    const conf = join(dir, 'sentinel.conf')
    writeFileSync(
      conf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `dir ${dir}`,
        'loglevel warning',
        `sentinel monitor policy 127.0.0.1 ${master.port} 1`,
        'sentinel down-after-milliseconds policy 2000',
        'sentinel failover-timeout policy 10000',
        ''
      ].join('\n')
    )
    await redisProcess(t, [conf, '--sentinel'], sentinelPort)

    const config = parseConfig(
      JSON.stringify({ common: { 'redis-sentinels': [`127.0.0.1:${sentinelPort}`], 'redis-master-name': 'policy' } }),
      join(dir, 'filterd.yaml')
    )
    const settings = sharedStoreSettings(config)!
    t.assert.match(settings.where, /^sentinel policy via 127\.0\.0\.1:\d+$/)
    const a = Store.open(join(dir, 'a'))
    t.after(async () => {
      await a.close()
    })
    const link = await linkStore(a, settings, silentLogger())
    t.after(async () => {
      await link.close()
    })
    await addUser(a, { name: 'alice' })
    t.assert.ok(a.getUser('alice') !== undefined, 'written through Redis and applied')
    const m = new Redis({ host: '127.0.0.1', port: master.port })
    m.on('error', () => {})
    t.after(() => {
      m.disconnect()
    })
    t.assert.strictEqual(await m.hexists(settings.keys.hash.users, 'alice'), 1, 'on the master the Sentinel named')
    // The replica acknowledges once its first sync is done, which a loaded machine can take past 5 s.
    await until('the replica acknowledges the write (WAIT 1)', async () => (await m.wait(1, 1000)) === 1, 30_000)

    // Failover: the Sentinel promotes the replica (it refuses until it has discovered the replica).
    const sentinel = new Redis({ host: '127.0.0.1', port: sentinelPort })
    sentinel.on('error', () => {})
    t.after(() => {
      sentinel.disconnect()
    })
    await until(
      'the Sentinel starting a failover',
      async () => {
        try {
          return (await sentinel.call('SENTINEL', 'FAILOVER', 'policy')) === 'OK'
        } catch {
          return false
        }
      },
      40_000
    )
    await until(
      'the replica being master',
      async () => {
        const addr = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'policy')) as string[]
        return addr[1] === String(replicaPort)
      },
      40_000
    )
    // The old master is made a replica of the new one (until then it still takes writes: the window
    // docs/operations-redis.md describes).
    await until('the old master demoted', async () => (await m.role())[0] === 'slave', 40_000)
    await until(
      'a write through the new master',
      async () => {
        try {
          await addUser(a, { name: 'bob' })
          return true
        } catch {
          return false
        }
      },
      40_000
    )
    const r = new Redis({ host: '127.0.0.1', port: replicaPort })
    r.on('error', () => {})
    t.after(() => {
      r.disconnect()
    })
    t.assert.strictEqual(await r.hexists(settings.keys.hash.users, 'bob'), 1, 'bob is on the promoted replica')
    await until('the follower applying from the new master', () => a.getUser('bob') !== undefined)
    t.assert.ok(a.getUser('alice') !== undefined)
  }
)
