// `filterd stats-migrate` with `stats.store: clickhouse`: makes the ClickHouse schema, then says it is
// up to date; a ClickHouse that does not answer is exit 1 with the reason.
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { run } from './stats-migrate.js'
import { openClickHouse, schemaVersion, SCHEMA_VERSION } from '../engine/clickhouse/index.js'
import { skipWithoutClickHouse, startClickHouse } from '../engine/clickhouse/testing/server.js'
import { releasedPort } from '../engine/testing/ports.js'
import { tempDir } from '../engine/testing/temp.js'

async function captured(fn: () => Promise<number>): Promise<[number, string, string]> {
  const out: string[] = []
  const err: string[] = []
  const [o, e] = [process.stdout.write.bind(process.stdout), process.stderr.write.bind(process.stderr)]
  // Strings only: the test runner's own reports (Buffers) may pass through meanwhile.
  process.stdout.write = (s: unknown) => (typeof s === 'string' ? out.push(s) > 0 : o(s as Buffer))
  process.stderr.write = (s: unknown) => (typeof s === 'string' ? err.push(s) > 0 : e(s as Buffer))
  try {
    return [await fn(), out.join(''), err.join('')]
  } finally {
    process.stdout.write = o
    process.stderr.write = e
  }
}

function configFor(t: TestContext, url: string): string {
  const root = tempDir(t, 'filterd-chmigrate-')
  const file = join(root, 'test.yaml')
  writeFileSync(
    file,
    `stats:\n  dir: ${join(root, 'csv')}\n  db: ${join(root, 'statsdb')}\n  store: clickhouse\n  clickhouse:\n    url: ${url}\n    database: fleet_stats\n`
  )
  return file
}

test('stats-migrate makes the ClickHouse schema once', { skip: skipWithoutClickHouse() }, async (t: TestContext) => {
  const server = await startClickHouse()
  t.after(() => server.stop())
  const file = configFor(t, server.url)
  t.assert.deepStrictEqual(await captured(() => run(['--config', file])), [
    0,
    `ClickHouse schema migrated to version ${SCHEMA_VERSION} at ${server.url} database fleet_stats\n`,
    ''
  ])
  t.assert.deepStrictEqual(await captured(() => run(['--config', file])), [
    0,
    `ClickHouse schema up to date at ${server.url} database fleet_stats\n`,
    ''
  ])
  const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'fleet_stats' })
  t.after(() => ch.close())
  t.assert.strictEqual(await schemaVersion(ch), SCHEMA_VERSION)
})

test('stats-migrate against a ClickHouse that does not answer exits 1 and says where', async (t: TestContext) => {
  const url = `http://127.0.0.1:${await releasedPort()}`
  const [code, out, err] = await captured(() => run(['--config', configFor(t, url)]))
  t.assert.strictEqual(code, 1)
  t.assert.strictEqual(out, '')
  t.assert.match(err, new RegExp(`^filterd stats-migrate: ClickHouse at ${url}: .*ECONNREFUSED`))
})
