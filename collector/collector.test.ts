import { test, type TestContext } from 'node:test'
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setup, startRole, type Child } from '../local/testing/harness.js'
import { readSnapshotFile, writeSnapshotFile, SnapshotFormatError } from '../engine/catdb/snapshot.js'
import { run } from '../tools/collector-usage.js'

async function startCollector(t: TestContext): Promise<{ c: Child; config: string; dir: string }> {
  const s = setup(t, ['key-a', 'key-b'])
  s.writeData('porn.example\t1\nexample.org/path\t4,5\n# a comment\n')
  const config = s.collectorConfig()
  return { c: await startRole(t, 'collector', config), config, dir: s.dir }
}

function form(fields: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString()
  }
}

async function usage(config: string, ...args: string[]): Promise<{ code: number; out: string }> {
  let out = ''
  const write = process.stdout.write
  process.stdout.write = (chunk: string) => {
    out += chunk
    return true
  }
  try {
    return { code: await run(['--config', config, ...args]), out }
  } finally {
    process.stdout.write = write
  }
}

test('accepts the filtering server usage form with the body ok and refuses an unknown key with 403', async (t: TestContext) => {
  const { c, config } = await startCollector(t)
  const ok = await fetch(`${c.url}/usage`, form({ key: 'key-a', count: '120' }))
  t.assert.strictEqual(ok.status, 200)
  t.assert.strictEqual(await ok.text(), 'ok')
  t.assert.strictEqual(await (await fetch(`${c.url}/usage`, form({ key: 'key-a', count: '90' }))).text(), 'ok')
  t.assert.strictEqual((await fetch(`${c.url}/usage`, form({ key: 'nobody', count: '1' }))).status, 403)
  t.assert.strictEqual((await fetch(`${c.url}/usage`, form({ key: 'key-a', count: 'many' }))).status, 400)
  const { code, out } = await usage(config, '--json', '--key', 'key-a')
  t.assert.strictEqual(code, 0)
  const [rec] = JSON.parse(out) as Array<{ forms: number; count: number; countMax: number }>
  t.assert.deepStrictEqual(
    { forms: rec!.forms, count: rec!.count, countMax: rec!.countMax },
    { forms: 2, count: 90, countMax: 120 }
  )
})

test('stores local service reports per key per day and shows them with filterd collector usage', async (t: TestContext) => {
  const { c, config } = await startCollector(t)
  const post = (key: string, cats: number[], unknown: number): Promise<Response> =>
    fetch(`${c.url}/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, counter_cat: cats, counter_unknown_cat: [unknown] })
    })
  t.assert.strictEqual((await post('key-a', [0, 2, 0, 1], 4)).status, 200)
  t.assert.strictEqual((await post('key-a', [0, 1], 1)).status, 200)
  t.assert.strictEqual((await post('key-b', [0, 0, 5], 0)).status, 200)
  t.assert.strictEqual((await post('stranger', [1], 0)).status, 403)
  t.assert.strictEqual(
    (
      await fetch(`${c.url}/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"key":"key-a","counter_cat":[-1],"counter_unknown_cat":[0]}'
      })
    ).status,
    400
  )
  const { out } = await usage(config)
  const lines = out.trim().split('\n')
  t.assert.match(lines[0]!, /^key\s+day\s+reports\s+lookups\s+unknown/)
  t.assert.match(lines[1]!, /^key-a\s+\d{4}-\d\d-\d\d\s+2\s+4\s+5\s+0/)
  t.assert.match(lines[2]!, /^key-b\s+\d{4}-\d\d-\d\d\s+1\s+5\s+0\s+0/)
  const [a] = JSON.parse((await usage(config, '--json', '--key', 'key-a')).out) as Array<{
    categories: Record<string, number>
  }>
  t.assert.deepStrictEqual(a!.categories, { 1: 3, 3: 1 })
})

test('publishes the data files as a snapshot whose manifest matches the served file', async (t: TestContext) => {
  const { c } = await startCollector(t)
  const headers = { 'x-filterd-key': 'key-b' }
  t.assert.strictEqual((await fetch(`${c.url}/db/manifest`)).status, 403)
  const m = (await (await fetch(`${c.url}/db/manifest?key=key-a`)).json()) as {
    version: number
    size: number
    sha256: string
    url: string
    entries: number
  }
  t.assert.strictEqual(m.version, 1)
  t.assert.strictEqual(m.entries, 2)
  // Relative to the manifest, so that a path prefix in front of the collector (a reverse proxy) is kept.
  t.assert.strictEqual(m.url, 'snapshots/1.snap.gz')
  const file = new URL(m.url, `${c.url}/db/manifest`)
  t.assert.strictEqual((await fetch(file)).status, 403)
  const res = await fetch(file, { headers })
  t.assert.strictEqual(res.headers.get('content-type'), 'application/gzip')
  const bytes = Buffer.from(await res.arrayBuffer())
  t.assert.strictEqual(bytes.length, m.size)
  t.assert.strictEqual(createHash('sha256').update(bytes).digest('hex'), m.sha256)
  t.assert.strictEqual(
    gunzipSync(bytes).toString(),
    '# filterd category snapshot 1\nporn.example\t1\nexample.org/path\t4,5\n# end 2\n'
  )
  t.assert.strictEqual((await fetch(`${c.url}/db/snapshots/../manifest.json`, { headers })).status, 404)
})

test('republishes only when the data files changed', async (t: TestContext) => {
  const s = setup(t, ['key-a'])
  s.writeData('porn.example\t1\n')
  const config = s.collectorConfig()
  const first = await startRole(t, 'collector', config)
  await first.stop()
  const again = await startRole(t, 'collector', config)
  t.assert.ok(again.logs.some((l) => l.msg === 'data files unchanged; snapshot already published'))
  s.writeData('porn.example\t2\n')
  again.proc.kill('SIGHUP')
  const published = await again.waitForLog((l) => l.msg === 'snapshot published')
  t.assert.strictEqual(published.version, 2)
})

test('a snapshot file round-trips and a truncated one is refused', async (t: TestContext) => {
  const { dir } = await startCollector(t)
  const file = join(dir, 'x.snap.gz')
  const entries = [
    { key: 'a.example', isUrl: false, categories: [1, 2] },
    { key: 'b.example/p', isUrl: true, categories: [3] }
  ]
  const info = await writeSnapshotFile(entries, file)
  t.assert.strictEqual(info.entries, 2)
  const back = []
  for await (const e of readSnapshotFile(file)) back.push(e)
  t.assert.deepStrictEqual(back, entries)
  const { gzipSync } = await import('node:zlib')
  const { writeFileSync } = await import('node:fs')
  const text = gunzipSync(readFileSync(file)).toString()
  writeFileSync(file, gzipSync(text.replace('# end 2\n', '')))
  await t.assert.rejects(async () => {
    for await (const e of readSnapshotFile(file)) void e
  }, SnapshotFormatError)
})
