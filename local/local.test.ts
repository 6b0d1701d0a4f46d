import { test, type TestContext } from 'node:test'
import { Agent, request } from 'node:http'
import { once } from 'node:events'
import { connect } from 'node:net'
import {
  fakeCollector,
  getJson,
  prefixProxy,
  rawRequest,
  setup,
  startRole,
  until,
  type Child
} from './testing/harness.js'

const DATA_V1 = 'porn.example\t1\nnews.example\t60,1\nwww.malware.example\t10\nexample.org/some/path\t5\n'

/** A collector serving DATA_V1 and a local service that loaded it. */
async function startPair(
  t: TestContext,
  opts: { reportInterval?: number; updateInterval?: number; language?: 'ru' | 'en'; httpServer?: 'uws' | 'node' } = {}
): Promise<{ collector: Child; local: Child; s: ReturnType<typeof setup> }> {
  const s = setup(t)
  s.writeData(DATA_V1)
  const collector = await startRole(t, 'collector', s.collectorConfig())
  const local = await startRole(t, 'local', s.localConfig(collector.url, opts))
  return { collector, local, s }
}

test('answers the category verdict of a categorized name and of its subdomains as JSON', async (t: TestContext) => {
  const { local } = await startPair(t)
  const r = await rawRequest(local.port, 'GET', '/porn.example')
  t.assert.strictEqual(r.status, 200)
  t.assert.strictEqual(r.headers['content-type'], 'application/json')
  t.assert.strictEqual(r.headers.connection, 'keep-alive')
  t.assert.deepStrictEqual(JSON.parse(r.body), { category: [1], bad: true, category_name: ['Pornography'] })
  const sub = await rawRequest(local.port, 'GET', '/a.b.PORN.example.')
  t.assert.deepStrictEqual(JSON.parse(sub.body), { category: [1], bad: true, category_name: ['Pornography'] })
  const two = JSON.parse((await rawRequest(local.port, 'GET', '/news.example')).body) as {
    category: number[]
    bad: boolean
  }
  t.assert.deepStrictEqual(
    [...two.category].sort((a, b) => a - b),
    [1, 60]
  )
  t.assert.strictEqual(two.bad, true)
})

test('with local.language: ru the category names are Russian (over datafiles.language: en)', async (t: TestContext) => {
  const { local } = await startPair(t, { language: 'ru' })
  const r = await rawRequest(local.port, 'GET', '/porn.example')
  t.assert.strictEqual(r.status, 200)
  t.assert.deepStrictEqual(JSON.parse(r.body), { category: [1], bad: true, category_name: ['Порнография'] })
  const two = JSON.parse((await rawRequest(local.port, 'GET', '/news.example')).body) as {
    category: number[]
    category_name: string[]
  }
  const names = new Map(two.category.map((c, i) => [c, two.category_name[i]]))
  t.assert.deepStrictEqual([names.get(1), names.get(60)], ['Порнография', 'Торренты и P2P'])
})

/** One HTTP/1.0 exchange without Host (an old probe): the whole answer, or '' when none came within `ms`. */
async function http10(port: number, path: string, ms: number): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write(`GET ${path} HTTP/1.0\r\n\r\n`)
  let text = ''
  socket.on('data', (d: Buffer) => {
    text += d.toString('latin1')
  })
  await Promise.race([once(socket, 'close'), new Promise((resolve) => setTimeout(resolve, ms))])
  socket.destroy()
  return text
}

test('with common.http-server: node an HTTP/1.0 client without Host gets its answer', async (t: TestContext) => {
  const { local } = await startPair(t, { httpServer: 'node' })
  const answer = await http10(local.port, '/porn.example', 5000)
  t.assert.match(answer, /^HTTP\/1\.[01] 200 /)
  t.assert.match(answer, /\{"category":\[1\],"bad":true,"category_name":\["Pornography"\]\}$/)
})

test('answers 404 with no body for a name that is not categorized', async (t: TestContext) => {
  const { local } = await startPair(t)
  for (const path of ['/unknown.example', '/malware.example', '/', '/not..valid', '/example.org/some/path']) {
    const r = await rawRequest(local.port, 'GET', path)
    t.assert.strictEqual(r.status, 404, path)
    t.assert.strictEqual(r.body, '', path)
    t.assert.strictEqual(r.headers['content-length'], '0', path)
  }
})

test('answers Connection: close when the client asks to close, keep-alive otherwise', async (t: TestContext) => {
  const { local } = await startPair(t)
  for (const path of ['/porn.example', '/unknown.example', '/stat/']) {
    t.assert.strictEqual(
      (await rawRequest(local.port, 'GET', path, 'Connection: close\r\n')).headers.connection,
      'close',
      path
    )
    t.assert.strictEqual(
      (await rawRequest(local.port, 'GET', path, 'Connection: keep-alive\r\n')).headers.connection,
      'keep-alive',
      path
    )
  }
  t.assert.strictEqual(
    (await rawRequest(local.port, 'POST', '/porn.example', 'Connection: close\r\n')).headers.connection,
    'close'
  )
})

test('serves several requests on one keep-alive connection', async (t: TestContext) => {
  const { local } = await startPair(t)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.after(() => agent.destroy())
  const sockets = new Set<unknown>()
  for (let i = 0; i < 3; i++) {
    const req = request({ port: local.port, host: '127.0.0.1', path: '/porn.example', agent })
    req.end()
    const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage]
    sockets.add(res.socket)
    t.assert.strictEqual(res.headers.connection, 'keep-alive')
    res.resume()
    await once(res, 'end')
  }
  t.assert.strictEqual(sockets.size, 1)
})

test('answers 405 text/html with Allow: GET to any other method on a domain path and on /stat/', async (t: TestContext) => {
  const { local } = await startPair(t)
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']) {
    for (const path of ['/porn.example', '/unknown.example', '/stat/']) {
      const r = await rawRequest(local.port, method, path)
      t.assert.strictEqual(r.status, 405, `${method} ${path}`)
      t.assert.strictEqual(r.headers.allow, 'GET', `${method} ${path}`)
      t.assert.strictEqual(r.headers['content-type'], 'text/html', `${method} ${path}`)
      t.assert.match(r.headers.connection ?? '', /^(keep-alive|close)$/)
    }
  }
})

test('counts lookups per category and unknown names in /stat/', async (t: TestContext) => {
  const { local } = await startPair(t)
  const before = await rawRequest(local.port, 'GET', '/stat/')
  t.assert.strictEqual(before.status, 200)
  t.assert.strictEqual(before.headers['content-type'], 'application/json')
  const zero = JSON.parse(before.body) as { counter_cat: number[]; counter_unknown_cat: number[] }
  t.assert.ok(zero.counter_cat.length > 60)
  t.assert.ok(zero.counter_cat.every((n) => n === 0))
  t.assert.deepStrictEqual(zero.counter_unknown_cat, [0])
  for (const p of [
    '/porn.example',
    '/x.porn.example',
    '/news.example',
    '/www.malware.example',
    '/nope.example',
    '/nope2.example'
  ]) {
    await rawRequest(local.port, 'GET', p)
  }
  const after = JSON.parse((await rawRequest(local.port, 'GET', '/stat/')).body) as {
    counter_cat: number[]
    counter_unknown_cat: number[]
  }
  t.assert.strictEqual(after.counter_cat[1], 3)
  t.assert.strictEqual(after.counter_cat[60], 1)
  t.assert.strictEqual(after.counter_cat[10], 1)
  t.assert.strictEqual(
    after.counter_cat.reduce((a, b) => a + b, 0),
    5
  )
  t.assert.deepStrictEqual(after.counter_unknown_cat, [2])
})

test('a successful report resets the counters by what it sent and keeps lookups made meanwhile', async (t: TestContext) => {
  const s = setup(t)
  // A fake statistics server, to hold one report open. It serves no database, so every name is
  // unknown: that is enough to count.
  const fake = await fakeCollector(t)
  const local = await startRole(t, 'local', s.localConfig(fake.url))
  t.assert.strictEqual(fake.reports.length, 1) // the first contact, at start
  await rawRequest(local.port, 'GET', '/unknown-1.example')
  await rawRequest(local.port, 'GET', '/unknown-2.example')
  const held = fake.hold()
  local.proc.kill('SIGUSR2')
  await held.arrived
  await rawRequest(local.port, 'GET', '/unknown-3.example') // counted while the report is in flight
  held.release()
  const sent = fake.reports[1]!
  t.assert.strictEqual(sent.key, 'test-key')
  t.assert.deepStrictEqual(sent.counter_unknown_cat, [2])
  // One connection per contact: none is kept idle between reports (local/reporter.ts).
  t.assert.deepStrictEqual(fake.connections, ['close', 'close'])
  await until(
    'the condition',
    async () =>
      ((await getJson(`${local.url}/stat/`)).body as { counter_unknown_cat: number[] }).counter_unknown_cat[0] === 1
  )
})

test('reports reach the real collector, which stores them per key per day', async (t: TestContext) => {
  const { local, s } = await startPair(t)
  for (let i = 0; i < 4; i++) await rawRequest(local.port, 'GET', '/porn.example')
  await rawRequest(local.port, 'GET', '/nope.example')
  local.proc.kill('SIGUSR2')
  await until('the condition', async () => {
    const stat = (await getJson(`${local.url}/stat/`)).body as { counter_cat: number[] }
    return stat.counter_cat[1] === 0
  })
  const { run } = await import('../tools/collector-usage.js')
  let out = ''
  const write = process.stdout.write
  process.stdout.write = (chunk: string) => {
    out += chunk
    return true
  }
  let code: number
  try {
    code = await run(['--config', s.collectorConfig(), '--json'])
  } finally {
    process.stdout.write = write
  }
  t.assert.strictEqual(code, 0)
  const records = JSON.parse(out) as Array<{
    key: string
    lookups: number
    unknown: number
    categories: Record<string, number>
  }>
  t.assert.strictEqual(records.length, 1)
  t.assert.strictEqual(records[0]!.key, 'test-key')
  t.assert.strictEqual(records[0]!.lookups, 4)
  t.assert.strictEqual(records[0]!.unknown, 1)
  t.assert.deepStrictEqual(records[0]!.categories, { 1: 4 })
})

async function expectBillingFailure(t: TestContext, port: number): Promise<void> {
  const r = await rawRequest(port, 'GET', '/porn.example')
  t.assert.strictEqual(r.status, 503)
  t.assert.strictEqual(r.headers['content-type'], 'application/json')
  t.assert.match(r.headers.connection ?? '', /^(keep-alive|close)$/)
  t.assert.deepStrictEqual(JSON.parse(r.body), { details: 'billing failure' })
}

const isBillingFailing = (port: number) => async (): Promise<boolean> =>
  (await rawRequest(port, 'GET', '/porn.example')).status === 503
const isBillingOk = (port: number) => async (): Promise<boolean> =>
  (await rawRequest(port, 'GET', '/porn.example')).status === 200

test('answers 503 billing failure while the collector is stopped, and recovers when it is back', async (t: TestContext) => {
  const s = setup(t)
  s.writeData(DATA_V1)
  // A fixed port below the ephemeral range (32768-60999 on Linux): a port picked by the kernel may be
  // taken as a client's source port while the collector is down, and the restart could not bind it.
  let first: Child | undefined
  for (let attempt = 0; first === undefined; attempt++) {
    try {
      first = await startRole(t, 'collector', s.collectorConfig(20000 + Math.floor(Math.random() * 12000)))
    } catch (err) {
      if (attempt >= 5) throw err
    }
  }
  const local = await startRole(t, 'local', s.localConfig(first.url, { reportInterval: 1 }))
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/porn.example')).status, 200)
  await first.stop()
  await until('the condition', isBillingFailing(local.port))
  await expectBillingFailure(t, local.port)
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/stat/')).status, 200)
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/nope.example')).status, 503)
  await startRole(t, 'collector', s.collectorConfig(first.port))
  await until('the condition', isBillingOk(local.port))
  const r = await rawRequest(local.port, 'GET', '/porn.example')
  t.assert.deepStrictEqual(JSON.parse(r.body), { category: [1], bad: true, category_name: ['Pornography'] })
})

test('answers 503 billing failure while the statistics server answers 500, and recovers on 200', async (t: TestContext) => {
  const s = setup(t)
  const fake = await fakeCollector(t)
  const local = await startRole(t, 'local', s.localConfig(fake.url, { reportInterval: 1 }))
  // The fake serves no database: every name is unknown, which is enough to tell 404 from 503.
  // Waited for, not asserted at once: on a loaded machine the first contact can time out, and
  // that start-up failure has its own test below.
  await until('the condition', async () => (await rawRequest(local.port, 'GET', '/porn.example')).status === 404)
  fake.mode = 'error'
  await until('the condition', isBillingFailing(local.port))
  await expectBillingFailure(t, local.port)
  fake.mode = 'ok'
  await until('the condition', async () => (await rawRequest(local.port, 'GET', '/porn.example')).status === 404)
})

test('answers 503 billing failure when the statistics server does not answer in time, and recovers', async (t: TestContext) => {
  const s = setup(t)
  const fake = await fakeCollector(t)
  const local = await startRole(t, 'local', s.localConfig(fake.url, { reportInterval: 1 }))
  fake.mode = 'hang'
  await local.waitForLog((l) => /contact failed/.test(l.msg ?? '') && String(l.reason).includes('timed out'))
  await expectBillingFailure(t, local.port)
  fake.mode = 'ok'
  await until('the condition', async () => (await rawRequest(local.port, 'GET', '/x.example')).status === 404)
})

test('answers 503 from the start when the first contact fails', async (t: TestContext) => {
  const s = setup(t)
  const fake = await fakeCollector(t)
  fake.mode = 'error'
  const local = await startRole(t, 'local', s.localConfig(fake.url))
  await expectBillingFailure(t, local.port)
})

test('applies a database update while lookups run: every answer is the old or the new verdict', async (t: TestContext) => {
  const { collector, local, s } = await startPair(t, { updateInterval: 1 })
  const OLD = JSON.stringify({ category: [1], bad: true, category_name: ['Pornography'] })
  const NEW = JSON.stringify({ category: [40], bad: false, category_name: ['Social networks'] })
  const extra = Array.from({ length: 5000 }, (_, i) => `filler-${i}.example\t${(i % 5) + 1}`).join('\n')
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/porn.example')).body, OLD)
  const seen = new Map<string, number>()
  let running = true
  let sawNew = false
  const agent = new Agent({ keepAlive: true, maxSockets: 8 })
  t.after(() => agent.destroy())
  const one = (): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ port: local.port, host: '127.0.0.1', path: '/porn.example', agent }, (res) => {
        let body = ''
        res
          .setEncoding('utf8')
          .on('data', (d: string) => {
            body += d
          })
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on('error', reject)
      req.end()
    })
  const loop = async (): Promise<void> => {
    while (running) {
      const r = await one()
      const key = `${r.status} ${r.body}`
      seen.set(key, (seen.get(key) ?? 0) + 1)
      if (r.body === NEW) sawNew = true
    }
  }
  const loops = Array.from({ length: 8 }, loop)
  s.writeData(`porn.example\t40\n${extra}\n`)
  collector.proc.kill('SIGHUP')
  await local.waitForLog((l) => l.msg === 'database update applied' && l.version === 2)
  await until('the condition', () => sawNew)
  // A little more load on the new version, then stop.
  const after = [...seen.values()].reduce((a, b) => a + b, 0)
  await until('the condition', () => [...seen.values()].reduce((a, b) => a + b, 0) > after + 50)
  running = false
  await Promise.all(loops)
  t.assert.deepStrictEqual([...seen.keys()].sort(), [`200 ${NEW}`, `200 ${OLD}`].sort())
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/filler-7.example')).status, 200)
})

test('refuses a corrupted download and keeps the database in use', async (t: TestContext) => {
  const { local, s } = await startPair(t, { updateInterval: 1 })
  const { publishSnapshot, writeManifest, readManifest } = await import('../engine/catdb/snapshot.js')
  const { readFileSync, writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const dir = join(s.dir, 'snapshots')
  const good = await publishSnapshot(dir, [{ key: 'porn.example', isUrl: false, categories: [40] }])
  const file = join(dir, `${good.version}.snap.gz`)
  const bytes = readFileSync(file)
  bytes[bytes.length - 10]! ^= 0xff // same size, different digest
  writeFileSync(file, bytes)
  t.assert.strictEqual(readManifest(dir)?.version, good.version)
  await local.waitForLog((l) => l.msg?.startsWith('database update refused') === true && l.version === good.version)
  const r = await rawRequest(local.port, 'GET', '/porn.example')
  t.assert.deepStrictEqual(JSON.parse(r.body), { category: [1], bad: true, category_name: ['Pornography'] })
  // A manifest whose size is wrong is refused as well.
  writeManifest(dir, { ...good, version: good.version + 1, size: good.size - 1 })
  await local.waitForLog((l) => l.msg?.startsWith('database update refused') === true && l.version === good.version + 1)
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/porn.example')).body, r.body)
})

test('loads its database through a collector-url with a path prefix (a reverse proxy in front of the collector)', async (t: TestContext) => {
  const s = setup(t)
  s.writeData(DATA_V1)
  const collector = await startRole(t, 'collector', s.collectorConfig())
  // https://vendor.example/filterd/ in production: the proxy serves the collector's `/` under /filterd/.
  const proxy = await prefixProxy(t, collector.url, '/filterd/')
  const local = await startRole(t, 'local', s.localConfig(proxy.url))
  // The first check ends before the service listens: its outcome is logged, applied or not.
  const outcome = await local.waitForLog((l) => l.msg?.startsWith('database update') === true)
  t.assert.strictEqual(outcome.msg, 'database update applied', JSON.stringify(outcome))
  const r = await rawRequest(local.port, 'GET', '/porn.example')
  t.assert.strictEqual(r.status, 200)
  t.assert.deepStrictEqual(JSON.parse(r.body), { category: [1], bad: true, category_name: ['Pornography'] })
  // Every request stayed under the prefix: manifest, snapshot, report.
  t.assert.deepStrictEqual([...new Set(proxy.paths)].sort(), [
    '/filterd/db/manifest',
    '/filterd/db/snapshots/1.snap.gz',
    '/filterd/report'
  ])
})
