/**
 * The importer's pipeline (engine/stats/importer.ts, batchPipeline): a batch's files are read into a
 * stage on a connection of their own while the batch before it writes. What it must keep: every file
 * once, writes in file order (the raw rows' order is the order they were written, rows of the same
 * millisecond across files included), the same tables as one batch at a time, and after a failed
 * write nothing from the batches queued behind it.
 */
import { test, type TestContext } from 'node:test'
import { cpSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { metaGet, openStatsDb, partitions, type StatsDb } from './db.js'
import { rawHourSources } from './raw-layout.js'
import { NOW, at, ledgerRows, rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'
import { importClosedFiles } from './importer.js'
import type { QueryLogRecord } from '../querylog/index.js'

const ROWS = 1200
const FILES = 12

/** Rows over two UTC hours, three per millisecond (so one millisecond spans two files), the address naming the row. */
function records(): QueryLogRecord[] {
  const out: QueryLogRecord[] = []
  const start = at('2024-05-15', '09:59') + 59_800
  for (let i = 0; i < ROWS; i++)
    out.push(
      rec(
        start + Math.floor(i / 3),
        `10.0.${i >> 8}.${i & 255}`,
        i % 5 === 0 ? null : `u${i % 7}`,
        `n${i % 13}.example`,
        {
          cats: [i % 4]
        }
      )
    )
  return out
}

function openDb(t: TestContext, path: string): StatsDb {
  const db = openStatsDb(path)
  t.after(() => db.close())
  return db
}

/** Every raw row in the raw rows' order, and the partials summed per key: what two imports of the same files must share. */
async function dump(db: StatsDb): Promise<{ raw: string[]; seq: number; hours: string[]; names: string[] }> {
  return await db.read(async (c) => {
    const p = await partitions(c)
    const tables = new Set(
      (await c.runAndReadAll('SELECT table_name FROM duckdb_tables()')).getRows().map((r) => String(r[0]))
    )
    const raw = (
      await c.runAndReadAll(
        `SELECT created, "user", address, host, cats FROM (${p.raw.flatMap((h) => rawHourSources(tables, h)).join(' UNION ALL ')}) ORDER BY created, layout, ord`
      )
    ).getRows()
    const hours = (
      await c.runAndReadAll(
        `SELECT "user", hour, sum(requests)::DOUBLE, sum(blocks)::DOUBLE FROM (${p.hours.map((d) => `SELECT * FROM hours_${d}`).join(' UNION ALL ')}) GROUP BY ALL ORDER BY ALL`
      )
    ).getRows()
    const names = (
      await c.runAndReadAll(
        `SELECT "user", host, sum(requests)::DOUBLE, arg_max(cats, seq) FROM (${p.names.map((d) => `SELECT * FROM names_${d}`).join(' UNION ALL ')}) GROUP BY ALL ORDER BY ALL`
      )
    ).getRows()
    return {
      raw: raw.map((r) => r.map(String).join(',')),
      seq: await metaGet(c, 'seq'),
      hours: hours.map((r) => r.map(String).join(',')),
      names: names.map((r) => r.map(String).join(','))
    }
  })
}

test('batches read while the batch before writes: each file once, rows in written order, the same tables as one batch at a time', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const rows = records()
  await writeFiles(env, rows, FILES)
  const serialDir = join(env.root, 'serial-csv')
  mkdirSync(serialDir)
  cpSync(env.config.stats.dir, serialDir, { recursive: true })
  t.assert.strictEqual(readdirSync(serialDir).length, FILES)

  // batchBytes 1: every file is a batch of its own, so each read overlaps the write before it.
  const piped = openDb(t, env.config.stats.db)
  const a = await importClosedFiles(piped, env.config.stats.dir, 'UTC', { now: () => NOW, batchBytes: 1 })
  t.assert.deepStrictEqual(a, { files: FILES, rows: ROWS, skipped: 0, pruned: 0 })
  const serial = openDb(t, join(env.root, 'serial-db'))
  const b = await importClosedFiles(serial, serialDir, 'UTC', { now: () => NOW, batchBytes: 1, pipeline: false })
  t.assert.deepStrictEqual(b, a)

  const d = await dump(piped)
  t.assert.strictEqual(await rawCount(piped), ROWS)
  t.assert.strictEqual(await ledgerRows(piped), ROWS)
  // In the raw rows' order, the rows come as they were written (file after file), and seq counts them all.
  t.assert.deepStrictEqual(
    d.raw.map((r) => r.split(',')[2]),
    rows.map((r) => r.address)
  )
  t.assert.strictEqual(d.seq, ROWS)
  t.assert.deepStrictEqual(d, await dump(serial))
})

test('a failed batch write: the batches read behind it write nothing, and the next run takes every file in once', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, records(), FILES)
  const db = openDb(t, env.config.stats.db)
  let failed = false
  const onChunk = (phase: 'in-txn' | 'after-commit'): void => {
    if (phase === 'in-txn' && !failed) {
      failed = true
      throw new Error('injected failure in the first batch')
    }
  }
  await t.assert.rejects(
    importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW, batchBytes: 1, onChunk }),
    /injected failure/
  )
  t.assert.strictEqual(await rawCount(db), 0, 'no batch behind the failed one wrote its rows')
  t.assert.strictEqual(await ledgerRows(db), 0)
  t.assert.strictEqual(readdirSync(env.config.stats.dir).length, FILES, 'every file stays for the next run')

  const again = await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW, batchBytes: 1 })
  t.assert.deepStrictEqual(again, { files: FILES, rows: ROWS, skipped: 0, pruned: 0 })
  t.assert.strictEqual(await rawCount(db), ROWS)
  t.assert.strictEqual(await ledgerRows(db), ROWS)
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [])
})
