import { test, type TestContext } from 'node:test'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { silentLogger } from '../engine/log/index.js'
import { statsTestEnv } from '../engine/testing/stats/fixtures.js'
import { redisPeriodClaim } from '../engine/replica/claim.js'
import { connectSharedStore } from '../engine/replica/redis.js'
import { testSettings } from '../engine/testing/replica.js'
import { redisClient, startRedis } from '../engine/testing/redis.js'
import { until } from '../engine/testing/wait.js'
import { startUsageReporter, usageClaimMs, vendorKeyDigest, type UsageReporter } from './usage-report.js'

function keyFiles(root: string): { pub: string; priv: string; digest: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pub = join(root, 'vendor.pub')
  const priv = join(root, 'vendor.key')
  writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }))
  writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const digest = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
  return { pub, priv, digest }
}

test('derives the key as the SHA-256 of the DER SubjectPublicKeyInfo, from a public or a private key', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const k = keyFiles(env.root)
  const { readFileSync } = await import('node:fs')
  t.assert.strictEqual(vendorKeyDigest(readFileSync(k.pub)), k.digest)
  t.assert.strictEqual(vendorKeyDigest(readFileSync(k.priv)), k.digest)
  t.assert.match(k.digest, /^[0-9a-f]{64}$/)
})

test('posts the key and the number of user IP entries as a form and takes ok as success', async (t: TestContext) => {
  const received: Array<{ type: string | undefined; connection: string | undefined; body: string }> = []
  let answer = 'ok'
  const server = createServer((req, res) => {
    let body = ''
    req
      .setEncoding('utf8')
      .on('data', (c: string) => {
        body += c
      })
      .on('end', () => {
        received.push({ type: req.headers['content-type'], connection: req.headers.connection, body })
        res.end(answer)
      })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    server.close()
  })
  const port = (server.address() as { port: number }).port
  const probe = statsTestEnv(t)
  const k = keyFiles(probe.root)
  const env = statsTestEnv(t, { 'vendor-url': `http://127.0.0.1:${port}/stat`, 'vendor-key': k.pub })
  const reporter = startUsageReporter(env.config, { addressCount: () => 42 }, silentLogger(), {
    firstDelayMs: 3_600_000
  })
  t.after(() => {
    reporter.close()
  })
  t.assert.strictEqual(await reporter.reportNow(), true)
  // The reporter asks for the connection to close: no idle socket stays behind (usage-report.ts says why).
  t.assert.deepStrictEqual(received, [
    { type: 'application/x-www-form-urlencoded', connection: 'close', body: `key=${k.digest}&count=42` }
  ])
  answer = 'error'
  t.assert.strictEqual(await reporter.reportNow(), false)
})

test('retries a failed report with a doubling delay, then returns to the interval', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const probe = statsTestEnv(t)
  const k = keyFiles(probe.root)
  const env = statsTestEnv(t, {
    'vendor-url': 'https://vendor.example/stat',
    'vendor-key': k.pub,
    'vendor-interval': 3600
  })
  const answers = [new Error('down'), 'busy', 'ok', 'ok']
  const calls: number[] = []
  let clock = 0
  const fakeFetch = (async () => {
    calls.push(clock)
    const a = answers.shift()
    if (a instanceof Error) throw a
    return new Response(a)
  }) as unknown as typeof fetch
  const reporter = startUsageReporter(env.config, { addressCount: () => 1 }, silentLogger(), {
    fetch: fakeFetch,
    firstDelayMs: 10,
    retryMs: 100
  })
  t.after(() => {
    reporter.close()
  })
  // The report reads the key file (real I/O), so wait, boundedly, for each call to happen and settle.
  const settle = async (n: number): Promise<void> => {
    const deadline = Date.now() + 10_000 // real time: only setTimeout is mocked
    while (Date.now() < deadline && calls.length < n) await new Promise((resolve) => setImmediate(resolve))
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve))
  }
  for (const [i, step] of [10, 100, 200, 3600_000].entries()) {
    clock += step
    t.mock.timers.tick(step)
    await settle(i + 1)
  }
  t.assert.deepStrictEqual(calls, [10, 110, 310, 3600_310])
})

test('does nothing when no vendor URL is configured', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const reporter = startUsageReporter(env.config, { addressCount: () => 1 }, silentLogger())
  t.assert.strictEqual(await reporter.reportNow(), false)
  reporter.close()
})

/**
 * Several hosts on one Redis: two reporters, as on two hosts, against one real Redis and
 * a fake vendor counting reports. One report per interval between them; a failed sender gives the
 * claim back so the other host sends; the claim lapses before the sender's next turn.
 */
test('hosts sharing a Redis send one usage report per interval between them; a failed sender lets another send', async (t: TestContext) => {
  let answer = 'ok'
  const received: string[] = []
  const server = createServer((req, res) => {
    let body = ''
    req
      .setEncoding('utf8')
      .on('data', (c: string) => {
        body += c
      })
      .on('end', () => {
        received.push(body)
        res.end(answer)
      })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    server.close()
  })
  const port = (server.address() as { port: number }).port
  const redis = await startRedis()
  t.after(async () => {
    await redis.stop()
  })
  const probe = statsTestEnv(t)
  const k = keyFiles(probe.root)
  const env = statsTestEnv(t, {
    'vendor-url': `http://127.0.0.1:${port}/stat`,
    'vendor-key': k.pub,
    'vendor-interval': 3600
  })
  const key = `t${process.pid}:usage-report`
  const reporters = ['hostA', 'hostB'].map((holder) => {
    // As the api role connects: no offline queue, so a command fails at once while Redis is away.
    const client = connectSharedStore(testSettings(redis.host, redis.port))
    t.after(() => {
      client.disconnect()
    })
    const reporter = startUsageReporter(env.config, { addressCount: () => 7 }, silentLogger(), {
      firstDelayMs: 3_600_000,
      claim: redisPeriodClaim(client, key, holder)
    })
    t.after(() => {
      reporter.close()
    })
    return reporter
  })
  const [a, b] = reporters as [UsageReporter, UsageReporter]
  const r = redisClient(t, redis)

  // Both hosts' turns, several times over, in one interval: one report.
  const results = await Promise.all([a.reportNow(), b.reportNow(), a.reportNow(), b.reportNow()])
  t.assert.deepStrictEqual(results, [true, true, true, true])
  await a.reportNow()
  await b.reportNow()
  t.assert.deepStrictEqual(received, [`key=${k.digest}&count=7`])
  // Held for the interval less a tenth (at most 5 s): lapsed before the sender's next turn.
  const ttl = await r.pttl(key)
  t.assert.ok(ttl > usageClaimMs(3_600_000) - 60_000 && ttl <= usageClaimMs(3_600_000), `claim ttl ${ttl}`)

  // The next interval (the claim lapsed): the sender's report fails; it gives the claim back, and
  // the other host's turn sends.
  await r.del(key)
  answer = 'busy'
  t.assert.strictEqual(await a.reportNow(), false)
  t.assert.strictEqual(received.length, 2)
  t.assert.strictEqual(await r.exists(key), 0, 'claim given back')
  answer = 'ok'
  t.assert.strictEqual(await b.reportNow(), true)
  t.assert.strictEqual(received.length, 3)
  t.assert.strictEqual(await r.get(key), 'hostB')
  t.assert.strictEqual(await a.reportNow(), true)
  t.assert.strictEqual(received.length, 3, 'A skips: B reported this interval')

  // Redis away: no host sends (each retries later), rather than every host sending.
  r.disconnect()
  await redis.kill()
  t.assert.strictEqual(await a.reportNow(), false)
  t.assert.strictEqual(received.length, 3)
})

test('a claim taken with SET NX PX lapses by itself; only its holder gives it back', async (t: TestContext) => {
  const redis = await startRedis()
  t.after(async () => {
    await redis.stop()
  })
  const c1 = redisClient(t, redis)
  const c2 = redisClient(t, redis)
  const key = `t${process.pid}:claim`
  const a = redisPeriodClaim(c1, key, 'A')
  const b = redisPeriodClaim(c2, key, 'B')
  // A claim of 3 s: the steps until B's second try must fit in it even on a loaded machine.
  t.assert.strictEqual(await a.take(3000), true)
  t.assert.strictEqual(await b.take(3000), false)
  await b.release()
  t.assert.strictEqual(await b.take(3000), false, "B cannot give back A's claim")
  await until('the claim lapsed', async () => (await c1.exists(key)) === 0, 10_000, 100)
  t.assert.strictEqual(await b.take(60_000), true, 'lapsed: another host takes it')
  await a.release()
  t.assert.strictEqual(await c1.get(key), 'B')
})
