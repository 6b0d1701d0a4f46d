/**
 * The block page and the categorization API count their requests and time them (by route pattern,
 * method and status) and serve both on their own `/metrics` to loopback callers: the real daemons,
 * scraped over HTTP.
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

async function scrape (url: string): Promise<string[]> {
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
  t.assert.ok(lines.some((l) => /^filterd_blockpage_http_requests_total\{route="\/\*",method="GET",status="\d{3}"\} 3$/.test(l)), lines.join('\n'))
  t.assert.ok(lines.includes('filterd_blockpage_http_request_duration_seconds_count{route="/*",method="GET"} 3'))
  t.assert.ok(lines.some((l) => l.startsWith('filterd_blockpage_http_request_duration_seconds_bucket{le="0.005",route="/*",method="GET"}')))
  t.assert.ok(lines.some((l) => l.startsWith('filterd_blockpage_process_resident_memory_bytes')))
})

test('the catapi daemon counts and times its requests on /metrics, by route and status', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-catapi-metrics-')
  const store = Store.open(join(dir, 'db'))
  await buildCats(store, [['example.com', [40]]])
  await store.close()
  const [reg, anon] = [await releasedPort(), await releasedPort()]
  const file = join(dir, 'filterd.yaml')
  writeFileSync(file, [
    'common:', `  db: ${join(dir, 'db')}`, '  log-level: silent',
    'datafiles:', `  cats: ${CONF}`,
    'catapi:', `  listen: 127.0.0.1:${reg}`, `  anon-listen: 127.0.0.1:${anon}`, '  log: "-"', `  pid: ${join(dir, 'catapi.pid')}`,
    'dnscache:', '  forward: [127.0.0.1:9]',
    ''
  ].join('\n'))
  const api = await startRole(t, 'catapi', file)
  await (await fetch(`http://127.0.0.1:${anon}/catgroups`)).text()
  await (await fetch(`http://127.0.0.1:${reg}/catgroups`)).text()   // no credentials: 401
  const lines = await scrape(`http://127.0.0.1:${reg}/metrics`)
  t.assert.ok(lines.includes('filterd_catapi_http_requests_total{route="/catgroups",method="GET",status="200"} 1'), lines.join('\n'))
  t.assert.ok(lines.includes('filterd_catapi_http_requests_total{route="/catgroups",method="GET",status="401"} 1'), lines.join('\n'))
  t.assert.ok(lines.includes('filterd_catapi_http_request_duration_seconds_count{route="/catgroups",method="GET"} 2'))
  t.assert.ok(api.port > 0)
})
