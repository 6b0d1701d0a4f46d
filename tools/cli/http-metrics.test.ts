/**
 * The block page, the categorization API, the collector and the local service count their requests
 * and time them (by route pattern, method and status) and serve both on their own `/metrics` to
 * loopback callers: the real daemons, scraped over HTTP.
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONF, startRole } from '../../engine/testing/daemon.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { tempDir } from '../../engine/testing/temp.js'
import { buildCats } from '../../engine/testing/store.js'
import { Store } from '../../engine/store/index.js'
import { makeStore } from '../../blockpage/testing/fixture.js'
import { setup } from '../../local/testing/harness.js'

async function scrape(url: string): Promise<string[]> {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
  return (await res.text()).split('\n')
}

test('the blockpage daemon counts and times its requests on /metrics', async (t: TestContext) => {
  const { configFile } = await makeStore(t)
  const bp = await startRole(t, 'blockpage', configFile)
  for (let i = 0; i < 3; i++) await (await fetch(`${bp.url}/any/path`, { headers: { host: 'casino.example' } })).text()
  const lines = await scrape(`${bp.url}/metrics`)
  // fetch cannot set Host, so what status the page gets is not the point here: that it is counted under it is.
  t.assert.ok(
    lines.some((l) => /^filterd_blockpage_http_requests_total\{route="\/\*",method="GET",status="\d{3}"\} 3$/.test(l)),
    lines.join('\n')
  )
  t.assert.ok(lines.includes('filterd_blockpage_http_request_duration_seconds_count{route="/*",method="GET"} 3'))
  t.assert.ok(
    lines.some((l) =>
      l.startsWith('filterd_blockpage_http_request_duration_seconds_bucket{le="0.005",route="/*",method="GET"}')
    )
  )
  t.assert.ok(lines.some((l) => l.startsWith('filterd_blockpage_process_resident_memory_bytes')))
})

test('the catapi daemon counts and times its requests on /metrics, by route and status', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-catapi-metrics-')
  const store = Store.open(join(dir, 'db'))
  await buildCats(store, [['example.com', [40]]])
  await store.close()
  const [reg, anon] = [await releasedPort(), await releasedPort()]
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    [
      'common:',
      `  db: ${join(dir, 'db')}`,
      '  log-level: silent',
      'datafiles:',
      `  cats: ${CONF}`,
      'catapi:',
      `  listen: 127.0.0.1:${reg}`,
      `  anon-listen: 127.0.0.1:${anon}`,
      '  log: "-"',
      `  pid: ${join(dir, 'catapi.pid')}`,
      'dnscache:',
      '  forward: [127.0.0.1:9]',
      ''
    ].join('\n')
  )
  const api = await startRole(t, 'catapi', file)
  await (await fetch(`http://127.0.0.1:${anon}/catgroups`)).text()
  await (await fetch(`http://127.0.0.1:${reg}/catgroups`)).text() // no credentials: 401
  const lines = await scrape(`http://127.0.0.1:${reg}/metrics`)
  t.assert.ok(
    lines.includes('filterd_catapi_http_requests_total{route="/catgroups",method="GET",status="200"} 1'),
    lines.join('\n')
  )
  t.assert.ok(
    lines.includes('filterd_catapi_http_requests_total{route="/catgroups",method="GET",status="401"} 1'),
    lines.join('\n')
  )
  t.assert.ok(lines.includes('filterd_catapi_http_request_duration_seconds_count{route="/catgroups",method="GET"} 2'))
  t.assert.ok(api.port > 0)
})

test('the collector and local daemons count and time their requests on /metrics, by route and status', async (t: TestContext) => {
  const s = setup(t)
  s.writeData('porn.example 1\n')
  const collector = await startRole(t, 'collector', s.collectorConfig())
  const local = await startRole(t, 'local', s.localConfig(collector.url))
  // The local service's first contact (a report) and update check reached the collector at its start.
  t.assert.strictEqual((await fetch(`${local.url}/porn.example`)).status, 200)
  t.assert.strictEqual((await fetch(`${local.url}/nothing.example`)).status, 404)
  t.assert.strictEqual((await fetch(`${local.url}/stat/`)).status, 200)
  const l = await scrape(`${local.url}/metrics`)
  t.assert.ok(l.includes('filterd_local_http_requests_total{route="/*",method="GET",status="200"} 1'), l.join('\n'))
  t.assert.ok(l.includes('filterd_local_http_requests_total{route="/*",method="GET",status="404"} 1'), l.join('\n'))
  t.assert.ok(l.includes('filterd_local_http_requests_total{route="/stat/",method="GET",status="200"} 1'), l.join('\n'))
  t.assert.ok(l.some((x) => x.startsWith('filterd_local_process_resident_memory_bytes')))
  t.assert.strictEqual((await fetch(`${collector.url}/db/manifest`)).status, 403) // no key
  const c = await scrape(`${collector.url}/metrics`)
  t.assert.ok(
    c.some((x) =>
      /^filterd_collector_http_requests_total\{route="\/report",method="POST",status="200"\} [1-9]/.test(x)
    ),
    c.join('\n')
  )
  t.assert.ok(
    c.some((x) =>
      /^filterd_collector_http_requests_total\{route="\/db\/manifest",method="GET",status="200"\} [1-9]/.test(x)
    ),
    c.join('\n')
  )
  t.assert.ok(
    c.includes('filterd_collector_http_requests_total{route="/db/manifest",method="GET",status="403"} 1'),
    c.join('\n')
  )
  t.assert.ok(
    c.some((x) =>
      x.startsWith(
        'filterd_collector_http_request_duration_seconds_bucket{le="0.005",route="/db/manifest",method="GET"}'
      )
    )
  )
})
