import { test, type TestContext } from 'node:test'
import { appendFileSync, cpSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import { openStatsDb, partitions, type StatsDb } from './db.js'
import { CLOSED_RE } from './files.js'
import { importRows, readCsvSql } from './import-sql.js'
import { appendCsvFiles } from './csv-append.js'
import { NOW, at, blocked, rec, statsTestEnv, writeFiles } from './testing/fixtures.js'
import { RAW_RETENTION_MS, ReportTime } from './time.js'
import type { QueryLogRecord } from '../querylog/index.js'

/**
 * Rows that exercise every column and the chunking: more than one DataChunk (2,048 rows) in one
 * hour, UTC hours over the UTC midnight and New York's, strings of 0, 12 and 13+ bytes (inline and not),
 * UTF-8, quoted fields, anonymous users, blocks, NXDOMAIN, categories.
 */
function rows(): QueryLogRecord[] {
  const out: QueryLogRecord[] = []
  const names = ['a.io', 'twelve.bytes', 'thirteen.byte', 'a,b.example', 'quo"te.example', 'bücher.example']
  const start = at('2024-05-14', '23:10')
  for (let i = 0; i < 5000; i++) {
    const t = start + i * 1000
    const user = i % 7 === 0 ? null : `user${i % 13}`
    const name = `${i % 50}.${names[i % names.length]!}`
    if (i % 10 === 0) out.push(blocked(t, '10.0.0.' + (i % 200), user, name, [i % 9, 40]))
    else
      out.push(
        rec(t, '2001:db8::' + (i % 300).toString(16), user, name, {
          nxdomain: i % 33 === 0,
          cats: i % 4 === 0 ? [] : [i % 5]
        })
      )
  }
  return out
}

const TABLE_ORDER = { raw: 'seq', hours: '"user", hour', names: '"user", host' } as const

async function dump(c: DuckDBConnection): Promise<Record<string, unknown[][]>> {
  const out: Record<string, unknown[][]> = {}
  const parts = await partitions(c)
  for (const kind of ['raw', 'hours', 'names'] as const) {
    for (const n of parts[kind]) {
      const table = `${kind}_${n}`
      out[table] = (await c.runAndReadAll(`SELECT * FROM ${table} ORDER BY ${TABLE_ORDER[kind]}`)).getRows()
    }
  }
  out.meta = (await c.runAndReadAll('SELECT * FROM meta ORDER BY key')).getRows()
  return out
}

async function viaAppender(db: StatsDb, files: string[], time: ReportTime): Promise<Record<string, unknown[][]>> {
  return await db.write(async (c) => {
    await c.run('BEGIN TRANSACTION')
    const r = await appendCsvFiles(c, time, files, window(time))
    await c.run('COMMIT')
    return { ...(await dump(c)), outcome: [[r.seq, ...[...r.files.values()].map((f) => `${f.rows}/${f.skipped}`)]] }
  })
}

async function viaSql(db: StatsDb, files: string[], time: ReportTime): Promise<Record<string, unknown[][]>> {
  return await db.write(async (c) => {
    await c.run('BEGIN TRANSACTION')
    const r = await importRows(c, time, readCsvSql(files, true), window(time))
    await c.run('COMMIT')
    const counts = files.map((f) => r.files.get(f)!).map((f) => `${f.rows}/${f.skipped}`)
    return { ...(await dump(c)), outcome: [[r.seq, ...counts]] }
  })
}

const window = (time: ReportTime): { keepDay: number; keepRaw: number; seq: number; chunk: number } => ({
  keepDay: time.aggregateRetentionStart(NOW),
  keepRaw: NOW - RAW_RETENTION_MS,
  seq: 4_294_967_290, // past 2^32: the 64-bit columns' high word is written
  chunk: 7
})

for (const zone of ['UTC', 'America/New_York']) {
  test(`the appender import writes the same raw rows, seq, partials and counters as DuckDB's read_csv (${zone})`, async (t: TestContext) => {
    const env = statsTestEnv(t)
    const dir = env.config.stats.dir
    await writeFiles(env, rows(), 3)
    const names = readdirSync(dir)
      .filter((n) => CLOSED_RE.test(n))
      .sort()
    // A record with no time (skipped, counted, numbered) and one with an extra trailing field.
    appendFileSync(join(dir, names[1]!), ',0,10.0.0.1,no-time.example,,none,,,alice\r\n')
    appendFileSync(
      join(dir, names[1]!),
      `${at('2024-05-15', '04:10')},1,10.0.0.1,extra.example,,none,3,,bob,cid,more\r\n`
    )
    appendFileSync(join(dir, names[1]!), `${at('2024-05-15', '03:10')},0,10.0.0.1,short.example\r\n`)
    cpSync(dir, join(env.root, 'copy'), { recursive: true })
    const time = new ReportTime(zone)
    const a = openStatsDb(join(env.root, 'a'))
    const b = openStatsDb(join(env.root, 'b'))
    t.after(async () => {
      await a.close()
      await b.close()
    })
    const got = await viaAppender(
      a,
      names.map((n) => join(dir, n)),
      time
    )
    const want = await viaSql(
      b,
      names.map((n) => join(env.root, 'copy', n)),
      time
    )
    t.assert.deepStrictEqual(Object.keys(got).sort(), Object.keys(want).sort())
    t.assert.ok(Object.keys(got).filter((k) => k.startsWith('raw_')).length >= 3, 'rows over three hours')
    for (const k of Object.keys(want)) t.assert.deepStrictEqual(got[k], want[k], k)
    t.assert.deepStrictEqual(got.outcome, [[4_294_967_290 + 5003, '1667/0', '1669/1', '1666/0']])
  })
}

test('an error in the middle of an append leaves nothing after the ROLLBACK: the rows are in the transaction', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, rows(), 1)
  const files = readdirSync(dir).map((n) => join(dir, n))
  const db = openStatsDb(join(env.root, 'db'))
  t.after(() => db.close())
  const time = new ReportTime('UTC')
  const left = await db.write(async (c) => {
    await c.run('BEGIN TRANSACTION')
    await t.assert.rejects(appendCsvFiles(c, time, [...files, join(dir, 'missing.csv')], window(time)), /ENOENT/)
    await c.run('ROLLBACK')
    return await partitions(c)
  })
  t.assert.deepStrictEqual(left, { raw: [], hours: [], names: [] })
})
