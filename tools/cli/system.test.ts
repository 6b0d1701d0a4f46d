/**
 * The quick start as a new user runs it: `filterd all` on the demo configuration (moved to free
 * ports and a temp folder), then the whole path across processes: a DNS query blocked by the demo
 * defaults, an API write enforced by the DNS server within 100 ms for that user's address only,
 * delegated prefixes matched by the longest one, the block page explaining it, both
 * categorization services answering, the query log imported into the reports, and a clean stop.
 */
import { test, type TestContext } from 'node:test'
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { get } from 'node:http'
import dnsPacket from 'dns-packet'
import { ask, firstA } from '../../engine/testing/dns.js'
import { demoConfig, demoPorts, startDemo } from '../../engine/testing/demo-config.js'
import { tempDir } from '../../engine/testing/temp.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const cli = join(root, 'dist/tools/filterd.js')

const execFileP = promisify(execFile)

async function queryA(port: number, name: string): Promise<string[]> {
  const sock = createSocket('udp4')
  try {
    sock.send(
      dnsPacket.encode({
        type: 'query',
        id: 4242,
        flags: dnsPacket.RECURSION_DESIRED,
        questions: [{ type: 'A', name }]
      }),
      port,
      '127.0.0.1'
    )
    const [msg] = (await once(sock, 'message')) as [Buffer]
    const answer = dnsPacket.decode(msg)
    return (answer.answers ?? []).filter((a) => a.type === 'A').map((a) => String((a as { data: unknown }).data))
  } finally {
    sock.close()
  }
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000, everyMs = 25): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v) || Date.now() > until) return v
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

test('filterd all runs the whole system on the demo configuration, end to end', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-system-')
  const ports = await demoPorts()
  // The shipped demo config, moved to free ports and this test's folder.
  const config = join(dir, 'demo.yaml')
  writeFileSync(config, demoConfig(dir, ports))
  const demo = await startDemo(t, config)
  const { child } = demo
  t.assert.match(demo.output(), /built-in stub upstream/)
  for (const role of ['dns', 'blockpage', 'api', 'catapi', 'local', 'collector'])
    t.assert.match(demo.output(), new RegExp(`^  ${role} `, 'm'))
  t.assert.match(demo.output(), /dig @127\.0\.0\.1 -p \d+ \+short casino\.example A/)

  // 0. The "Try it" lines, run as printed, in order, tell the story their comments say: blocked by the
  // defaults, forwarded, the page, then blocked by the user demo's filter, then no longer blocked, then
  // blocked again once the demo user is deleted. They run twice with nothing in between: the store
  // (common.db) outlives the process, so the next `npm start` meets whatever the first round left.
  const tryIt = demo
    .output()
    .slice(demo.output().indexOf('Try it:'))
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => /^(dig|curl) /.test(l))
  t.assert.ok(tryIt.length >= 10, demo.output())
  let digs = 0
  for (const round of [1, 2]) {
    for (const line of tryIt) {
      const command = line.replace(/\s+#.*$/, '')
      if (!command.startsWith('dig ') || !command.includes('casino.example')) {
        await execFileP('sh', ['-c', command])
        continue
      }
      const want = /no longer blocked/.test(line) ? '198.51.100.10' : '127.0.0.1'
      // A person types the next line long after the API's answer; the daemon takes up to a few ms.
      const got = await eventually(
        async () => (await execFileP('sh', ['-c', command])).stdout.trim(),
        (a) => a === want,
        3000,
        50
      )
      t.assert.strictEqual(got, want, `round ${round}: ${line}`)
      digs++
    }
  }
  t.assert.strictEqual(digs, 8, 'four casino.example lookups a round')

  // 0b. DoT and DoH on the demo's loopback ports, with the self-signed certificate made at this first
  // start: the kdig lines printed, run as printed (kdig: Debian's knot-dnsutils, which CI installs).
  t.assert.match(demo.output(), /demo: made a self-signed certificate for dns\.filterd\.local/)
  const kdigs = demo
    .output()
    .slice(demo.output().indexOf('Try it:'))
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('kdig '))
  t.assert.strictEqual(kdigs.length, 4, demo.output())
  if ((await execFileP('sh', ['-c', 'command -v kdig']).catch(() => undefined)) !== undefined) {
    const kdig = async (line: string): Promise<string> =>
      (await execFileP('sh', ['-c', line.replace(/\s+#.*$/, '')])).stdout.trim()
    // The story above gave kid1 to the user demo and deleted it: the ID is unknown again, so REFUSED
    // (nothing under +short) until a user holds it.
    const user = (method: string, body?: unknown): Promise<Response> =>
      fetch(`http://127.0.0.1:${ports.api}/users/kidtest`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    for (const line of kdigs.filter((l) => l.includes('kid1'))) t.assert.strictEqual(await kdig(line), '', line)
    t.assert.ok((await user('PUT', { client_ids: ['kid1'], filter: [] })).ok)
    for (const line of kdigs) {
      const want = line.includes('casino.example') ? '127.0.0.1' : '198.51.100.10'
      t.assert.strictEqual(
        await eventually(
          () => kdig(line),
          (a) => a === want,
          3000,
          50
        ),
        want,
        line
      )
    }
    t.assert.ok((await user('DELETE')).ok)
  }
  t.assert.strictEqual(
    (await fetch(`http://127.0.0.1:${ports.api}/users/demo`)).status,
    404,
    'the Try it lines leave no user demo behind'
  )

  // 1. The demo's defaults block gambling for anonymous addresses; other names are forwarded.
  t.assert.deepStrictEqual(
    await eventually(
      () => queryA(ports.dns!, 'casino.example'),
      (a) => a[0] === '127.0.0.1',
      3000,
      20
    ),
    ['127.0.0.1']
  )
  t.assert.deepStrictEqual(await queryA(ports.dns!, 'example.org'), ['198.51.100.10'])

  // 2. The billing system makes 127.0.0.1 a user who blocks social networks: enforced without restart,
  // within 100 ms of the API acknowledging the write, and for that user's address only.
  const api = `http://127.0.0.1:${ports.api}`
  t.assert.deepStrictEqual(await queryA(ports.dns!, 'vk.com'), ['198.51.100.10'])
  const put = await fetch(`${api}/users/alice/ip/`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: '["127.0.0.1"]'
  })
  t.assert.ok(put.ok)
  const filter = await fetch(`${api}/users/alice/filter/`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: '[40]'
  })
  t.assert.ok(filter.ok)
  // The first query leaves 100 ms after the acknowledgement and must already see the new policy: this
  // checks the daemon's delay, not how fast a query round trip is on a loaded machine.
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.assert.deepStrictEqual(
    await queryA(ports.dns!, 'vk.com'),
    ['127.0.0.1'],
    'blocked for alice 100 ms after the API acknowledged the write'
  )
  t.assert.deepStrictEqual(await queryA(ports.dns!, 'casino.example'), ['198.51.100.10'])
  // 127.0.0.2 belongs to no user: the same name is still forwarded there, and the demo defaults still apply.
  t.assert.strictEqual(firstA(await ask(ports.dns!, 'vk.com', 'A', { from: '127.0.0.2' })), '198.51.100.10')
  t.assert.strictEqual(firstA(await ask(ports.dns!, 'casino.example', 'A', { from: '127.0.0.2' })), '127.0.0.1')

  // 2b. Delegated prefixes set through the API: a /24 that blocks social networks, and a /29 inside it, for
  // another user, that blocks gambling. The DNS daemon follows the longest prefix holding the source
  // address; each user's answers differ from the other's and from the anonymous defaults (1, 2, 30).
  for (const [user, body] of [
    ['lan', { ip: ['127.0.0.0/24'], filter: [40] }],
    ['office', { ip: ['127.0.0.8/29'], filter: [30] }]
  ] as const) {
    const res = await fetch(`${api}/users/${user}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
    t.assert.ok(res.ok, `PUT /users/${user}: ${res.status}`)
  }
  const from = async (address: string, name: string): Promise<string | undefined> =>
    firstA(await ask(ports.dns!, name, 'A', { from: address }))
  t.assert.strictEqual(
    await eventually(
      () => from('127.0.0.3', 'vk.com'),
      (a) => a === '127.0.0.1',
      1000,
      5
    ),
    '127.0.0.1',
    '127.0.0.3 follows the /24 (lan)'
  )
  t.assert.strictEqual(await from('127.0.0.3', 'casino.example'), '198.51.100.10', '127.0.0.3 follows the /24 (lan)')
  t.assert.strictEqual(await from('127.0.0.9', 'casino.example'), '127.0.0.1', '127.0.0.9 follows the /29 (office)')
  t.assert.strictEqual(
    await from('127.0.0.9', 'vk.com'),
    '198.51.100.10',
    '127.0.0.9 follows the /29 (office), not the /24'
  )
  t.assert.strictEqual(await from('127.0.0.9', 'adult.example'), '198.51.100.10', '127.0.0.9 is a user, not anonymous')

  // 3. The block page explains it, with the category name.
  // (fetch would replace the Host header with the URL's; a browser sends the blocked name.)
  const page = await new Promise<string>((resolve, reject) => {
    get(
      { host: '127.0.0.1', port: ports.blockpage, path: '/', headers: { host: 'vk.com', accept: 'text/html' } },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          body += d
        })
        res.on('end', () => resolve(body))
      }
    ).on('error', reject)
  })
  t.assert.match(page, /Social networks/)
  t.assert.match(page, /vk\.com/)

  // 4. The categorization API and the local service answer from the same database.
  const cat = await fetch(`http://127.0.0.1:${ports.anon}/domain/www.vk.com`)
  t.assert.deepStrictEqual(await cat.json(), { category: [40], bad: false, category_name: ['Social networks'] })
  const local = await eventually(
    () => fetch(`http://127.0.0.1:${ports.local}/vk.com`),
    (r) => r.status === 200,
    10_000
  )
  // A 503 is a failed contact with the collector: the local role's lines say why.
  const localLines = (): string =>
    demo
      .output()
      .split('\n')
      .filter((l) => l.includes('"role":"local"') || l.includes('"role":"collector"'))
      .slice(-12)
      .join('\n')
  t.assert.strictEqual(local.status, 200, localLines())

  // 5. The query log reaches the reports once imported. The api role (the statistics store's one
  // writer) takes files in every few seconds by itself, so the command may find them taken already.
  const run = promisify(execFile)
  const imported = await run(process.execPath, [cli, 'stats-import', '--config', config])
  t.assert.match(imported.stdout, /imported \d+ rows .*\(by the api role, the statistics store's writer\)/)
  const day = new Date().toISOString().slice(0, 10)
  const report = (await (await fetch(`${api}/users/alice/stat/domains/all?from=${day}&to=${day}`)).json()) as {
    labels: string[]
    datasets: Array<{ label: string; data: number[] }>
  }
  const i = report.labels.indexOf('vk.com')
  t.assert.ok(i >= 0, JSON.stringify(report))
  t.assert.strictEqual(report.datasets.find((d) => d.label === 'Blocks')?.data[i], 1)

  // 6. A clean stop: every daemon exits and removes its pid file.
  child.kill('SIGTERM')
  const [code] = (await once(child, 'exit')) as [number]
  t.assert.strictEqual(code, 0)
  for (const role of ['dns', 'blockpage', 'api', 'catapi', 'local', 'collector'])
    t.assert.ok(!existsSync(join(dir, 'run', `${role}.pid`)), `${role}.pid left behind`)
})
