import { test, type TestContext } from 'node:test'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { silentLogger } from '../log/index.js'
import { statsTestEnv } from './testing/fixtures.js'
import { startUsageReporter, vendorKeyDigest } from './usage-report.js'

function keyFiles (root: string): { pub: string, priv: string, digest: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pub = join(root, 'vendor.pub')
  const priv = join(root, 'vendor.key')
  writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }))
  writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const digest = createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex')
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
  const received: Array<{ type: string | undefined, body: string }> = []
  let answer = 'ok'
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => { body += c }).on('end', () => {
      received.push({ type: req.headers['content-type'], body })
      res.end(answer)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => { server.close() })
  const port = (server.address() as { port: number }).port
  const probe = statsTestEnv(t)
  const k = keyFiles(probe.root)
  const env = statsTestEnv(t, { 'vendor-url': `http://127.0.0.1:${port}/stat`, 'vendor-key': k.pub })
  const reporter = startUsageReporter(env.config, { addressCount: () => 42 }, silentLogger(), { firstDelayMs: 3_600_000 })
  t.after(() => { reporter.close() })
  t.assert.strictEqual(await reporter.reportNow(), true)
  t.assert.deepStrictEqual(received, [{ type: 'application/x-www-form-urlencoded', body: `key=${k.digest}&count=42` }])
  answer = 'error'
  t.assert.strictEqual(await reporter.reportNow(), false)
})

test('retries a failed report with a doubling delay, then returns to the interval', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const probe = statsTestEnv(t)
  const k = keyFiles(probe.root)
  const env = statsTestEnv(t, { 'vendor-url': 'https://vendor.example/stat', 'vendor-key': k.pub, 'vendor-interval': 3600 })
  const answers = [new Error('down'), 'busy', 'ok', 'ok']
  const calls: number[] = []
  let clock = 0
  const fakeFetch = (async () => {
    calls.push(clock)
    const a = answers.shift()
    if (a instanceof Error) throw a
    return new Response(a)
  }) as unknown as typeof fetch
  const reporter = startUsageReporter(env.config, { addressCount: () => 1 }, silentLogger(), { fetch: fakeFetch, firstDelayMs: 10, retryMs: 100 })
  t.after(() => { reporter.close() })
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
