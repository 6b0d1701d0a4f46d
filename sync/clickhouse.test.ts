// The sync role with `stats.store: clickhouse` (no Redis): this host's closed statistics files reach
// ClickHouse by themselves; while ClickHouse is killed they wait in stats.dir (/health 503, the spool on
// /metrics) and once it is back they are sent, each row once.
import { test, type TestContext } from 'node:test'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openClickHouse } from '../engine/clickhouse/index.js'
import { skipWithoutClickHouse, startClickHouse } from '../engine/clickhouse/testing/server.js'
import { startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson, until } from '../engine/testing/wait.js'
import { CSV_HEADER, closedName, formatRow } from '../engine/querylog/index.js'

let seq = 0
function writeClosedFile(dir: string, first: number, rows: number): void {
  let text = CSV_HEADER
  for (let i = first; i < first + rows; i++)
    text += formatRow(
      Date.now() - 1000 + (i % 1000),
      i % 2 === 0,
      '10.0.0.1',
      `q${i}.example`,
      '',
      'none',
      [],
      [],
      'alice'
    )
  writeFileSync(join(dir, closedName(Date.now(), 4242, (seq++).toString(36))), text)
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(name + ' '))
  return Number(line?.split(' ')[1])
}

test(
  'the sync role feeds ClickHouse from stats.dir and spools while it is away',
  { skip: skipWithoutClickHouse(), timeout: 300_000 },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const root = tempDir(t, 'filterd-chsync-')
    const dir = join(root, 'csv')
    mkdirSync(dir)
    const file = join(root, 'sync.yaml')
    writeFileSync(
      file,
      [
        'stats:',
        `  dir: ${dir}`,
        '  store: clickhouse',
        '  import-interval: 1',
        '  clickhouse:',
        `    url: ${server.url}`,
        '    database: fleet',
        'common:',
        '  host-id: dns-a',
        'sync:',
        '  listen: 127.0.0.1:0',
        '  log: "-"',
        `  pid: ${join(root, 'sync.pid')}`
      ].join('\n')
    )
    const sync = await startRole(t, 'sync', file)
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'fleet' })
    t.after(() => ch.close())
    const rows = async (): Promise<number> => {
      const [r] = await ch.rows('SELECT count() AS c FROM fleet.queries').catch(() => [{ c: -1 }])
      return Number(r?.c)
    }
    writeClosedFile(dir, 0, 500)
    await until('the first file in ClickHouse', async () => (await rows()) === 500, 60_000, 200)
    // The rows are readable a moment before the insert's answer reaches the sink, which counts them then.
    await until(
      'the sink counts the rows ClickHouse acknowledged',
      async () => (await metric(sync.url, 'filterd_clickhouse_rows_sent_total')) === 500,
      10_000,
      50
    )
    t.assert.strictEqual((await fetchJson(`${sync.url}/health`)).status, 200)

    await server.kill()
    writeClosedFile(dir, 500, 300)
    await until(
      '/health says ClickHouse is away',
      async () => (await fetchJson(`${sync.url}/health`)).status === 503,
      60_000,
      200
    )
    const health = (await fetchJson(`${sync.url}/health`)).body as { degraded: Array<{ what: string }> }
    t.assert.deepStrictEqual(
      health.degraded.map((p) => p.what),
      ['clickhouse']
    )
    t.assert.strictEqual(await metric(sync.url, 'filterd_clickhouse_spool_files'), 1)
    t.assert.ok((await metric(sync.url, 'filterd_clickhouse_spool_bytes')) > 0)
    t.assert.strictEqual(readdirSync(dir).filter((n) => n.endsWith('.csv')).length, 1, 'the file waits')

    await server.start()
    await until(
      'the spool drained',
      async () => (await rows()) === 800 && (await fetchJson(`${sync.url}/health`)).status === 200,
      120_000,
      200
    )
    t.assert.strictEqual(await metric(sync.url, 'filterd_clickhouse_spool_files'), 0)
    const [dups] = await ch.rows('SELECT count() - uniqExact(host) AS d FROM fleet.queries')
    t.assert.strictEqual(Number(dups?.d), 0, 'no row twice')
    await sync.stop()
  }
)
