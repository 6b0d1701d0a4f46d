import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { DEFAULT_TEMPLATES_DIR } from '../blockpage/templates.js'
import { get, visibleText } from '../blockpage/testing/fixture.js'
import { startRole } from '../engine/testing/daemon.js'
import { fetchJson as getJson, until } from '../engine/testing/wait.js'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from '../engine/testing/tls.js'
import { ReportTime, formatDay, type Chart } from '../engine/stats/index.js'
import { ANONYMOUS_USER } from '../engine/querylog/index.js'
import { rec, statsTestEnv, writeFiles } from '../engine/testing/stats/fixtures.js'
import { rawExchange } from '../engine/testing/http.js'
import { call, tempDir, writeTaxonomy } from './testing/fixtures.js'

const CLI = fileURLToPath(new URL('../tools/filterd.js', import.meta.url))

test('filterd api serves the management API, writes its pid file, and removes it on SIGTERM', async (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-daemon-')
  t.after(cleanup)
  writeTaxonomy(join(dir, 'cats'))
  const pidFile = join(dir, 'run', 'api.pid')
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    [
      'datafiles:',
      `  cats: ${join(dir, 'cats')}`,
      '  language: en',
      'common:',
      `  db: ${join(dir, 'db')}`,
      'api:',
      '  listen: 127.0.0.1:0',
      '  log: "-"',
      `  pid: ${pidFile}`
    ].join('\n')
  )
  const child = spawn(process.execPath, [CLI, 'api', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  // The role logs one JSON line "api started" with its endpoints once it listens; port 0 is resolved there.
  let port = 0
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; endpoints?: string[] }
    if (entry.msg === 'api started') {
      port = Number(/:(\d+)/.exec(entry.endpoints?.[0] ?? '')?.[1])
      break
    }
  }
  child.stdout.resume()
  t.assert.ok(port > 0)
  t.assert.strictEqual(readFileSync(pidFile, 'utf8').trim(), String(child.pid))
  const base = `http://127.0.0.1:${port}`
  t.assert.strictEqual((await call(base, 'PUT', '/users/daemon', { ip: ['10.0.0.1'], filter: [40] })).status, 200)
  t.assert.deepStrictEqual((await call(base, 'GET', '/users/daemon/filter/')).body, [40])
  // The default common.http-server (auto) serves this role with node:http, for proxies and billing scripts:
  // HTTP/1.0 is answered (nginx proxy_pass, HAProxy httpchk, ab), a missing Host is a 400, absolute form routes.
  t.assert.match(
    await rawExchange(port, 'GET /users/daemon/filter/ HTTP/1.0\r\n\r\n'),
    /^HTTP\/1\.1 200 [^]*\r\n\r\n\[40\]$/
  )
  t.assert.match(
    await rawExchange(port, 'GET /users/daemon/filter/ HTTP/1.1\r\n\r\n'),
    /^HTTP\/1\.1 400 [^]*HTTP_BAD_HOST/
  )
  t.assert.match(
    await rawExchange(
      port,
      `GET http://127.0.0.1:${port}/users/daemon/filter/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`
    ),
    /^HTTP\/1\.1 200 [^]*\[40\]$/
  )
  child.kill('SIGTERM')
  const [code] = (await exited) as [number | null]
  t.assert.strictEqual(code, 0)
  t.assert.strictEqual(existsSync(pidFile), false)
})

/**
 * One config file for the api daemon and the block page daemon in front of it, API host
 * api.isp.example: the api daemon takes a free port first, and the block page's copy of the file
 * names that port, since the front door forwards to api.listen. `extra`: each section's own lines
 * besides listen, host, templates, log and pid.
 */
function frontDoorConfig(
  dir: string,
  apiListen: string,
  name: string,
  extra: { api: string[]; blockpage: string[] }
): string {
  const file = join(dir, name)
  writeFileSync(
    file,
    [
      'datafiles:',
      `  cats: ${join(dir, 'cats')}`,
      '  language: en',
      'common:',
      `  db: ${join(dir, 'db')}`,
      'stats:',
      `  dir: ${join(dir, 'stats')}`,
      `  db: ${join(dir, 'statsdb')}`,
      'api:',
      `  listen: ${apiListen}`,
      '  host: api.isp.example',
      ...extra.api,
      '  log: "-"',
      `  pid: ${join(dir, 'run', 'api.pid')}`,
      'blockpage:',
      '  listen: 127.0.0.1:0',
      ...extra.blockpage,
      `  templates: ${DEFAULT_TEMPLATES_DIR}`,
      '  log: "-"',
      `  pid: ${join(dir, 'run', 'blockpage.pid')}`
    ].join('\n')
  )
  return file
}

test("the blockpage daemon's front door sends the API host to the api daemon for allowed sources only, and other hosts to the block page", async (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-front-')
  t.after(cleanup)
  writeTaxonomy(join(dir, 'cats'))
  const configFor = (apiListen: string, name: string): string =>
    frontDoorConfig(dir, apiListen, name, { api: ['  access: ["allow 127.0.0.2/32", "deny all"]'], blockpage: [] })
  const api = await startRole(t, 'api', configFor('127.0.0.1:0', 'api.yaml'))
  const front = await startRole(t, 'blockpage', configFor(`127.0.0.1:${api.port}`, 'blockpage.yaml'))

  const allowed = await get(front.port, {
    host: 'API.isp.example',
    path: '/categories/',
    from: '127.0.0.2',
    accept: 'application/json'
  })
  t.assert.strictEqual(allowed.status, 200)
  t.assert.deepStrictEqual(JSON.parse(allowed.body), {
    0: 'Non-Existing Domain',
    1: 'Pornography',
    2: 'Erotica and nudity',
    40: 'Social networks',
    41: 'Dating'
  })

  // 127.0.0.1 is loopback, let in by the default rules; these rules deny it.
  const denied = await get(front.port, {
    host: 'api.isp.example',
    path: '/categories/',
    from: '127.0.0.1',
    accept: 'application/json'
  })
  t.assert.strictEqual(denied.status, 403)
  t.assert.deepStrictEqual(JSON.parse(denied.body), {
    error: { code: 'API_FORBIDDEN', message: 'access to the management API is not allowed from this address' }
  })

  const page = await get(front.port, { host: 'news.example', path: '/categories/', from: '127.0.0.2' })
  t.assert.strictEqual(page.status, 200)
  t.assert.match(String(page.headers['content-type']), /^text\/html/)
  t.assert.match(visibleText(page.body), /no longer blocked/)
})

test('the api daemon imports closed statistics files by itself, at start and then every stats.import-interval', async (t: TestContext) => {
  const env = statsTestEnv(t, { 'import-interval': 5 })
  writeTaxonomy(join(env.root, 'cats'))
  const file = join(env.root, 'api.yaml')
  writeFileSync(
    file,
    env.yaml +
      [
        'datafiles:',
        `  cats: ${join(env.root, 'cats')}`,
        '  language: en',
        'common:',
        `  db: ${join(env.root, 'db')}`,
        'api:',
        '  listen: 127.0.0.1:0',
        '  log: "-"',
        `  pid: ${join(env.root, 'api.pid')}`
      ].join('\n')
  )
  const now = Date.now()
  await writeFiles(env, [rec(now, '192.0.2.7', null, 'first.example')])
  const api = await startRole(t, 'api', file)
  // The import at start takes the file that was already closed, and says so.
  await until('the condition', () => api.logs.some((l) => l.msg === 'statistics imported'), 10_000)
  const day = formatDay(new ReportTime('UTC').dayOf(now))
  const report = async (): Promise<Chart> =>
    (await getJson(`${api.url}/users/${encodeURIComponent(ANONYMOUS_USER)}/stat/domains/all?from=${day}&to=${day}`))
      .body as Chart
  t.assert.deepStrictEqual((await report()).labels, ['first.example'])
  // A file closed later is only seen by the timer (every 5 s), with nobody asking for an import.
  await writeFiles(env, [rec(Date.now(), '192.0.2.8', null, 'second.example')])
  await until('the condition', async () => (await report()).labels.length === 2, 10_000)
  t.assert.deepStrictEqual(await report(), {
    labels: ['first.example', 'second.example'],
    datasets: [
      { label: 'Requests', data: [1, 1] },
      { label: 'NXdomain', data: [0, 0] },
      { label: 'Blocks', data: [0, 0] }
    ]
  })
})

/** One HTTPS request to 127.0.0.1:port (the test certificate is self-signed). */
function httpsCall(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, method, path, headers, rejectUnauthorized: false, agent: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          text += c
        })
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text })
        })
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

test(
  "through the front door's TLS listener an API client authenticates, and its write is audited by the api daemon",
  { skip: hasOpenssl() ? false : OPENSSL_MISSING },
  async (t: TestContext) => {
    const { dir, cleanup } = tempDir('filterd-tls-api-')
    t.after(cleanup)
    writeTaxonomy(join(dir, 'cats'))
    const { cert, key } = writeTestCertificate(dir, 'api.isp.example')
    // Loopback callers are made to present credentials too, so this one host stands for a caller from outside.
    const configFor = (apiListen: string, name: string): string =>
      frontDoorConfig(dir, apiListen, name, {
        api: ['  loopback-without-credentials: false'],
        blockpage: ['  tls-listen: 127.0.0.1:0', `  tls-cert: ${cert}`, `  tls-key: ${key}`]
      })
    const apiConfig = configFor('127.0.0.1:0', 'api.yaml')
    const api = await startRole(t, 'api', apiConfig)
    const front = await startRole(t, 'blockpage', configFor(`127.0.0.1:${api.port}`, 'blockpage.yaml'))
    const started = await front.waitForLog((l) => l.msg === 'blockpage started')
    const httpsEndpoint = (started.endpoints as string[]).find((e) => e.startsWith('blockpage https'))!
    const tlsPort = Number(/:(\d+)$/.exec(httpsEndpoint)![1])

    const added = execFileSync(process.execPath, [CLI, 'api-client', 'add', '--config', apiConfig, '--id', 'billing'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore']
    })
    const token = /^bearer_token: (\S+)$/m.exec(added)![1]!

    const anonymous = await httpsCall(tlsPort, 'GET', '/config/', { host: 'api.isp.example' })
    t.assert.strictEqual(anonymous.status, 401)
    t.assert.match(String(anonymous.headers['www-authenticate']), /Bearer realm=/)
    const body = JSON.stringify({ ip: ['10.9.9.9'], filter: [40] })
    const put = await httpsCall(
      tlsPort,
      'PUT',
      '/users/over-tls',
      {
        host: 'api.isp.example',
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body))
      },
      body
    )
    t.assert.strictEqual(put.status, 200, put.body)
    t.assert.deepStrictEqual((JSON.parse(put.body) as { filter: number[] }).filter, [40])
    const line = await api.waitForLog((l) => l.audit === 'api' && l.path === '/users/over-tls')
    t.assert.deepStrictEqual([line.who, line.source, line.method, line.status], ['billing', '127.0.0.1', 'PUT', 200])
    t.assert.strictEqual(typeof line.time, 'string')
  }
)
