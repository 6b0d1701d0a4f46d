import { test, type TestContext } from 'node:test'
import { releasedPort } from '../engine/testing/ports.js'
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { request, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { CSV_HEADER, formatRow } from '../engine/querylog/index.js'
import { once } from 'node:events'
import { createHttpServer } from '../engine/http/index.js'
import { silentLogger } from '../engine/log/index.js'
import { createFrontDoor, type FrontDoor } from './front-door.js'
import { addApiClient, configFrom, memoryLogger, startApi, tempDir } from '../api/testing/fixtures.js'
import type { LogLevel } from '../engine/config/index.js'
import { fakeRequest, httpRequest, type RawHttpResponse } from '../engine/testing/http.js'

type Reply = RawHttpResponse

function send(
  port: number,
  opts: {
    method?: string
    path?: string
    host: string
    body?: string
    headers?: Record<string, string>
    localAddress?: string
  }
): Promise<Reply> {
  return httpRequest({
    port,
    ...(opts.method === undefined ? {} : { method: opts.method }),
    ...(opts.path === undefined ? {} : { path: opts.path }),
    ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }),
    ...(opts.body === undefined ? {} : { body: opts.body }),
    headers: {
      host: opts.host,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers
    }
  })
}

/** A front listener like the block page role's: the API host goes through the door, the rest is "the block page". */
async function startFront(
  t: TestContext,
  apiListen: string,
  apiLines: string[] = [],
  level: LogLevel = 'info'
): Promise<{ port: number; door: FrontDoor; lines: Array<Record<string, unknown>> }> {
  const { dir, cleanup } = tempDir('filterd-door-')
  t.after(cleanup)
  const config = configFrom(
    dir,
    ['api:', `  listen: ${apiListen}`, '  host: api.isp.example', ...apiLines.map((l) => '  ' + l)].join('\n')
  )
  const { logger, lines } = memoryLogger(level)
  const door = createFrontDoor(config, logger)
  t.after(() => {
    door.close()
  })
  const server = createHttpServer()
  server.route('*', '/*', async (req, res) => {
    if (door.isApiHost(req.header('host'))) await door.handle(req, res)
    else res.send('block page')
  })
  t.after(() => server.close())
  const { port } = await server.listen('127.0.0.1', 0)
  return { port, door, lines }
}

/** The API daemon behind the door, with the door's `api.host` (one config, as in production). */
async function startBackend(
  t: TestContext,
  apiYaml?: string
): Promise<{ listen: string; api: Awaited<ReturnType<typeof startApi>> }> {
  const api = await startApi({
    apiYaml: ['host: api.isp.example', ...(apiYaml === undefined ? [] : [apiYaml])].join('\n')
  })
  t.after(() => api.close())
  return { listen: `127.0.0.1:${api.port}`, api }
}

test('the API host goes to the management API with method, path, query, body and status kept; other hosts to the block page', async (t: TestContext) => {
  const backend = await startBackend(t)
  const { port } = await startFront(t, backend.listen)
  const put = await send(port, {
    method: 'PUT',
    path: '/users/door/ip/',
    host: 'API.isp.example:80',
    body: '["10.0.0.1"]'
  })
  t.assert.strictEqual(put.status, 200)
  t.assert.deepStrictEqual(JSON.parse(put.body), { ip: ['10.0.0.1'], moved: [] })
  t.assert.strictEqual(put.headers['content-type'], 'application/json')
  const page = await send(port, { method: 'GET', path: '/users?start=0&stop=1', host: 'api.isp.example' })
  t.assert.deepStrictEqual(
    (JSON.parse(page.body) as Array<{ name: string }>).map((u) => u.name),
    ['door']
  )
  const missing = await send(port, { method: 'GET', path: '/users/nobody', host: 'api.isp.example' })
  t.assert.strictEqual(missing.status, 404)
  t.assert.strictEqual((JSON.parse(missing.body) as { error: { code: string } }).error.code, 'API_USER_NOT_FOUND')
  const head = await send(port, { method: 'HEAD', path: '/users/door', host: 'api.isp.example' })
  t.assert.strictEqual(head.status, 200)
  const blocked = await send(port, { path: '/users/door', host: 'blocked.example' })
  t.assert.deepStrictEqual([blocked.status, blocked.body], [200, 'block page'])
})

test('isApiHost ignores case, port and a trailing dot, and nothing else', (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-door-')
  t.after(cleanup)
  const door = createFrontDoor(configFrom(dir, 'api:\n  host: api.isp.example'), silentLogger())
  t.after(() => {
    door.close()
  })
  for (const h of ['api.isp.example', 'API.ISP.EXAMPLE', 'api.isp.example.', 'api.isp.example:8080'])
    t.assert.strictEqual(door.isApiHost(h), true, h)
  for (const h of [undefined, '', 'isp.example', 'x.api.isp.example', 'api.isp.example.evil', '127.0.0.1'])
    t.assert.strictEqual(door.isApiHost(h), false, String(h))
})

test('api.access rules are read from the top and the first match wins; a denied request gets a 403 JSON body and reaches nothing', async (t: TestContext) => {
  const backend = await startBackend(t)
  const { port, lines } = await startFront(t, backend.listen, [
    'access: ["allow 127.0.0.2/32", "deny 127.0.0.0/8", "allow all"]'
  ])
  const allowed = await send(port, { path: '/config/', host: 'api.isp.example', localAddress: '127.0.0.2' })
  t.assert.strictEqual(allowed.status, 200)
  const denied = await send(port, {
    method: 'PUT',
    path: '/users/x/ip/',
    host: 'api.isp.example',
    body: '["10.0.0.1"]',
    localAddress: '127.0.0.1'
  })
  t.assert.strictEqual(denied.status, 403)
  t.assert.deepStrictEqual(JSON.parse(denied.body), {
    error: { code: 'API_FORBIDDEN', message: 'access to the management API is not allowed from this address' }
  })
  t.assert.ok(
    lines.some((l) => l.audit === 'api' && l.source === '127.0.0.1' && l.status === 403),
    'the denied write is audited with the address'
  )
  const check = await send(port, { path: '/users/x', host: 'api.isp.example', localAddress: '127.0.0.2' })
  t.assert.strictEqual(check.status, 404, 'the denied PUT created nothing')
  const page = await send(port, { path: '/', host: 'blocked.example', localAddress: '127.0.0.1' })
  t.assert.strictEqual(page.body, 'block page', 'the rules guard the API only')
})

test("a write the api.access rules refuse leaves the api role's audit line in the front door's log, even at log-level warn; a refused read leaves none then", async (t: TestContext) => {
  const backend = await startBackend(t)
  const { port, lines } = await startFront(t, backend.listen, ['access: ["deny 127.0.0.1/32", "allow all"]'], 'warn')
  t.assert.strictEqual(
    (await send(port, { method: 'DELETE', path: '/users/x', host: 'api.isp.example', localAddress: '127.0.0.1' }))
      .status,
    403
  )
  t.assert.strictEqual(
    (await send(port, { path: '/users/x', host: 'api.isp.example', localAddress: '127.0.0.1' })).status,
    403
  )
  t.assert.deepStrictEqual(
    lines.map((l) => [l.level, l.audit, l.who, l.source, l.method, l.path, l.status, l.by]),
    [[30, 'api', '-', '127.0.0.1', 'DELETE', '/users/x', 403, 'front-door']]
  )
  t.assert.strictEqual(backend.api.lines.filter((l) => l.audit === 'api').length, 0, 'the api daemon never saw it')
})

test('the default rules let only loopback in', (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-door-')
  t.after(cleanup)
  const config = configFrom(dir, 'api:\n  host: api.isp.example')
  t.assert.deepStrictEqual(config.api.access, ['allow 127.0.0.0/8', 'allow ::1/128', 'deny all'])
})

test('a denied peer from outside loopback gets 403 under the default rules', async (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-door-')
  t.after(cleanup)
  const door = createFrontDoor(configFrom(dir, 'api:\n  host: api.isp.example'), silentLogger())
  t.after(() => {
    door.close()
  })
  let status = 0
  let body = ''
  const res = {
    json(v: unknown, s?: number) {
      status = s ?? 200
      body = JSON.stringify(v)
    }
  }
  await door.handle(fakeRequest('192.0.2.10'), res as unknown as Parameters<FrontDoor['handle']>[1])
  t.assert.strictEqual(status, 403)
  t.assert.match(body, /API_FORBIDDEN/)
})

test('X-Forwarded-For is believed only from a trusted proxy, and the rightmost untrusted address is the client', async (t: TestContext) => {
  // The address rules alone decide here (no credentials): this test is about which address they judge.
  const backend = await startBackend(t, 'require-credentials: false')
  const { port, door } = await startFront(t, backend.listen, [
    'trusted-proxies: [127.0.0.1, 10.0.0.0/8]',
    'access: ["allow 192.0.2.0/24", "deny all"]'
  ])
  const through = await send(port, {
    path: '/config/',
    host: 'api.isp.example',
    headers: { 'x-forwarded-for': '203.0.113.9, 192.0.2.7, 10.1.1.1' }
  })
  t.assert.strictEqual(through.status, 200, 'client 192.0.2.7 behind two trusted hops')
  const spoofed = await send(port, {
    path: '/config/',
    host: 'api.isp.example',
    headers: { 'x-forwarded-for': '192.0.2.7, 203.0.113.9' }
  })
  t.assert.strictEqual(spoofed.status, 403, 'an address the client wrote left of its own proves nothing')
  t.assert.strictEqual(
    door.clientAddress(fakeRequest('192.0.2.50', { 'x-forwarded-for': '192.0.2.7' })),
    '192.0.2.50',
    'untrusted peer: header ignored'
  )
  t.assert.strictEqual(door.clientAddress(fakeRequest('127.0.0.1', {})), '127.0.0.1')
  t.assert.strictEqual(door.clientAddress(fakeRequest('127.0.0.1', { 'x-forwarded-for': 'garbage' })), 'garbage')
  const untrusted = await send(port, {
    path: '/config/',
    host: 'api.isp.example',
    localAddress: '127.0.0.3',
    headers: { 'x-forwarded-for': '192.0.2.7' }
  })
  t.assert.strictEqual(untrusted.status, 403, 'the peer 127.0.0.3 is not a trusted proxy, so it is judged itself')
})

test('a management API daemon that is down gives 502 with a JSON error body', async (t: TestContext) => {
  // A port that was free a moment ago and has nothing listening now.
  const freePort = await releasedPort()
  const { port } = await startFront(t, `127.0.0.1:${freePort}`)
  const r = await send(port, { path: '/config/', host: 'api.isp.example' })
  t.assert.strictEqual(r.status, 502)
  t.assert.deepStrictEqual(JSON.parse(r.body), {
    error: { code: 'API_UNAVAILABLE', message: 'the management API is not available' }
  })
})

test('the live query log (text/event-stream) passes through the front door as it comes, and ends upstream when the client leaves', async (t: TestContext) => {
  const { dir: tmp, cleanup } = tempDir('filterd-door-live-')
  t.after(cleanup)
  const csv = join(tmp, 'csv')
  mkdirSync(csv)
  const part = join(csv, `current-${process.pid}-1.csv.part`)
  writeFileSync(part, CSV_HEADER)
  const api = await startApi({ apiYaml: 'host: api.isp.example', liveLog: { dir: csv, pollMs: 20 } })
  t.after(() => api.close())
  const { port } = await startFront(t, `127.0.0.1:${api.port}`)
  let text = ''
  const req = request({
    host: '127.0.0.1',
    port,
    path: '/live/queries?last=0',
    headers: { host: 'api.isp.example' },
    agent: false
  })
  const responded = once(req, 'response') as Promise<[IncomingMessage]>
  req.end()
  const [answer] = await responded
  t.assert.strictEqual(answer.statusCode, 200)
  t.assert.match(String(answer.headers['content-type']), /^text\/event-stream/)
  answer.setEncoding('utf8').on('data', (d: string) => {
    text += d
  })
  for (let i = 0; i < 500 && api.api.liveLog.clients === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  appendFileSync(
    part,
    formatRow(Date.now(), false, '10.0.0.1', 'through-the-door.example', '', 'none', [], [], 'alice')
  )
  for (let i = 0; i < 500 && !text.includes('through-the-door.example'); i++)
    await new Promise((resolve) => setTimeout(resolve, 10))
  t.assert.match(text, /through-the-door\.example/)
  answer.destroy()
  for (let i = 0; i < 500 && api.api.liveLog.clients > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.assert.strictEqual(api.api.liveLog.clients, 0)
})

test('after the address rules the API checks credentials: the door tells it the judged client, whatever the client wrote', async (t: TestContext) => {
  const backend = await startBackend(t)
  const client = await addApiClient(backend.api.store, 'billing')
  const { port } = await startFront(t, backend.listen, [
    'trusted-proxies: [127.0.0.1]',
    'access: ["allow 192.0.2.0/24", "deny all"]'
  ])
  // A client behind the trusted proxy, claiming to be loopback in the door's own header: the door overwrites it.
  const claim = { 'x-forwarded-for': '192.0.2.7', 'x-filterd-client': '127.0.0.1' }
  const none = await send(port, { path: '/config/', host: 'api.isp.example', headers: claim })
  t.assert.strictEqual(none.status, 401)
  t.assert.strictEqual((JSON.parse(none.body) as { error: { code: string } }).error.code, 'API_UNAUTHORIZED')
  t.assert.match(String(none.headers['www-authenticate']), /Bearer realm="filterd management API"/)
  t.assert.match(String(none.headers['www-authenticate']), /Basic realm="filterd management API"/)
  const put = await send(port, {
    method: 'PUT',
    path: '/users/billed',
    host: 'api.isp.example',
    body: '{"filter":[40]}',
    headers: { ...claim, authorization: client.bearer }
  })
  t.assert.strictEqual(put.status, 200, put.body)
  const audit = backend.api.lines.find((l) => l.audit === 'api' && l.path === '/users/billed')
  t.assert.deepStrictEqual([audit?.who, audit?.source], ['billing', '192.0.2.7'])
  // The rules still come first: an address they deny never reaches the credential check.
  const denied = await send(port, {
    path: '/config/',
    host: 'api.isp.example',
    headers: { 'x-forwarded-for': '203.0.113.9', authorization: client.bearer }
  })
  t.assert.strictEqual(denied.status, 403)
})

test('through the front door, a switch without a body and without a type passes from curl or a script, with or without credentials; a cross-site one gets 403', async (t: TestContext) => {
  const backend = await startBackend(t)
  const client = await addApiClient(backend.api.store, 'billing')
  const { port } = await startFront(t, backend.listen, [
    'trusted-proxies: [127.0.0.1]',
    'access: ["allow 127.0.0.0/8", "allow 192.0.2.0/24", "deny all"]'
  ])
  const store = backend.api.store
  const status = (): string | undefined => store.getUser('billed')?.status
  const put = await send(port, {
    method: 'PUT',
    path: '/users/billed',
    host: 'api.isp.example',
    body: '{"filter":[1]}'
  })
  t.assert.strictEqual(put.status, 200, put.body)
  const local = await send(port, { method: 'POST', path: '/users/billed/status/disabled', host: 'api.isp.example' })
  t.assert.strictEqual(local.status, 200, local.body)
  t.assert.strictEqual(status(), 'disabled')
  const outside = await send(port, {
    method: 'POST',
    path: '/users/billed/status/enabled',
    host: 'api.isp.example',
    headers: { 'x-forwarded-for': '192.0.2.7', authorization: client.bearer }
  })
  t.assert.strictEqual(outside.status, 200, outside.body)
  t.assert.strictEqual(status(), 'enabled')
  const cross = await send(port, {
    method: 'POST',
    path: '/users/billed/status/disabled',
    host: 'api.isp.example',
    headers: { origin: 'http://evil.example' }
  })
  t.assert.strictEqual(cross.status, 403, cross.body)
  t.assert.strictEqual(status(), 'enabled')
})

test('through the front door too, a cross-site request gets 403 API_CROSS_SITE and a write that is not JSON 415, from the API behind it', async (t: TestContext) => {
  const backend = await startBackend(t, 'allowed-origins: [https://admin.isp.example]')
  const { port } = await startFront(t, backend.listen, ['allowed-origins: [https://admin.isp.example]'])
  const code = (r: Reply): string => (JSON.parse(r.body) as { error: { code: string } }).error.code
  const body = '["csrf-proof.example"]'
  const cross = await send(port, {
    method: 'POST',
    path: '/blacklist/',
    host: 'api.isp.example',
    body,
    headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }
  })
  t.assert.deepStrictEqual([cross.status, code(cross)], [403, 'API_CROSS_SITE'])
  const plain = await send(port, {
    method: 'POST',
    path: '/blacklist/',
    host: 'api.isp.example',
    body,
    headers: { 'content-type': 'text/plain' }
  })
  t.assert.deepStrictEqual([plain.status, code(plain)], [415, 'API_UNSUPPORTED_MEDIA_TYPE'])
  t.assert.deepStrictEqual(backend.api.store.getList(null, 'black'), [])
  const allowed = await send(port, {
    method: 'POST',
    path: '/blacklist/',
    host: 'api.isp.example',
    body,
    headers: { origin: 'https://admin.isp.example', 'sec-fetch-site': 'cross-site' }
  })
  t.assert.strictEqual(allowed.status, 200, 'an origin in api.allowed-origins')
  const same = await send(port, {
    method: 'GET',
    path: '/blacklist/',
    host: 'api.isp.example',
    headers: { origin: 'http://api.isp.example', 'sec-fetch-site': 'same-origin' }
  })
  t.assert.deepStrictEqual([same.status, JSON.parse(same.body)], [200, ['csrf-proof.example']])
})
