import { test, type TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
// A reader that is not DuckDB: the files must stand on their own.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import type { Logger } from '../log/index.js'
import { openStatsDb, type StatsDb } from './db.js'
import { importClosedFiles } from './importer.js'
import { exportParquetHours } from './parquet.js'
import { ANONYMOUS_USER } from '../querylog/files.js'
import { NOW, SCENARIO, at, writeFiles, statsTestEnv, type StatsTestEnv } from '../testing/stats/fixtures.js'

function openDb(t: TestContext, env: StatsTestEnv): StatsDb {
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  return db
}

function captureLogs(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const logger: Logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n'))
          if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
        cb()
      }
    })
  )
  return { logger, lines }
}

async function readParquet(
  file: string
): Promise<{ types: Record<string, string>; rows: Array<Record<string, unknown>> }> {
  const buffer = await asyncBufferFromFile(file)
  const meta = await parquetMetadataAsync(buffer)
  const types: Record<string, string> = {}
  for (const el of meta.schema.slice(1)) {
    const logical =
      el.logical_type?.type === 'TIMESTAMP'
        ? `TIMESTAMP(${el.logical_type.isAdjustedToUTC ? 'UTC' : 'local'})`
        : (el.logical_type?.type ?? el.converted_type ?? '')
    types[el.name] = `${el.type ?? ''}${logical === '' ? '' : `/${logical}`}`
  }
  const rows = (await parquetReadObjects({ file: buffer })) as Array<Record<string, unknown>>
  return { types, rows }
}

test('the importer writes each raw hour that is over as a Parquet file another reader reads: rows and types', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const out = join(env.root, 'parquet')
  await writeFiles(env, SCENARIO, 2)
  const db = openDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW, parquetDir: out })
  // At 12:30 the hours 23:00 (the day before), 10:00 and 11:00 are over; 12:00 is not.
  t.assert.deepStrictEqual(readdirSync(out), [
    'queries-2024-05-14T23.parquet',
    'queries-2024-05-15T10.parquet',
    'queries-2024-05-15T11.parquet'
  ])
  const { types, rows } = await readParquet(join(out, 'queries-2024-05-15T10.parquet'))
  t.assert.deepStrictEqual(types, {
    created: 'INT64/TIMESTAMP(UTC)',
    user: 'BYTE_ARRAY/UTF8',
    nxdomain: 'BOOLEAN',
    address: 'BYTE_ARRAY/UTF8',
    host: 'BYTE_ARRAY/UTF8',
    blockedhost: 'BYTE_ARRAY/UTF8',
    reason: 'BYTE_ARRAY/UTF8',
    cats: 'BYTE_ARRAY/UTF8',
    blockedcats: 'BYTE_ARRAY/UTF8',
    source: 'BYTE_ARRAY/UTF8'
  })
  t.assert.deepStrictEqual(
    rows.map((r) => [
      (r.created as Date).toISOString(),
      r.user,
      r.nxdomain,
      r.address,
      r.host,
      r.blockedhost,
      r.reason,
      r.cats,
      r.blockedcats
    ]),
    [
      ['2024-05-15T10:05:00.000Z', 'alice', false, '10.0.0.1', 'www.news.example', '', 'none', '5', ''],
      ['2024-05-15T10:10:00.000Z', 'alice', false, '10.0.0.2', 'www.news.example', '', 'none', '5', ''],
      ['2024-05-15T10:20:00.000Z', 'alice', false, '10.0.0.2', 'ads.example', 'ads.example', 'category', '3', '3']
    ]
  )
  t.assert.strictEqual((await readParquet(join(out, 'queries-2024-05-15T11.parquet'))).rows.length, 2)

  // A run later: the files written stay as they are, the hour now over is added.
  t.assert.deepStrictEqual(await exportParquetHours(db, out, NOW), [])
  t.assert.deepStrictEqual(await exportParquetHours(db, out, at('2024-05-15', '13:05')), [
    'queries-2024-05-15T12.parquet'
  ])
  const noon = (await readParquet(join(out, 'queries-2024-05-15T12.parquet'))).rows
  t.assert.deepStrictEqual(
    noon.map((r) => [r.user, r.host, r.nxdomain]),
    [
      ['alice', 'nx.example', true],
      [ANONYMOUS_USER, 'x.example', false],
      [ANONYMOUS_USER, 'x.example', false],
      ['alice', 'www.news.example', false]
    ]
  )
})

test('a half-written Parquet file is never served: a crash leftover is removed, a full disk leaves no file and is logged', async (t: TestContext) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root to mount a small tmpfs')
    return
  }
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO)
  const db = openDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  // Its own directory, outside the test's temp dir (whose removal would meet the mount).
  const out = mkdtempSync(join(tmpdir(), 'filterd-parquet-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', out])
  t.after(() => {
    execFileSync('umount', [out])
    rmSync(out, { recursive: true })
  })
  // A disk with no room left.
  const filler = join(out, 'filler')
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k', 'count=1000'], { stdio: 'ignore' })
  } catch {
    /* dd stops when the disk is full: that is the point */
  }
  const { logger, lines } = captureLogs()
  t.assert.deepStrictEqual(await exportParquetHours(db, out, NOW, logger), [])
  t.assert.deepStrictEqual(readdirSync(out), ['filler'], 'neither a final nor a temporary file is left')
  const failed = lines.filter((l) => l.level === 50)
  t.assert.strictEqual(failed.length, 3, JSON.stringify(lines))
  t.assert.match(String(failed[0]!.msg), /Parquet export of the raw log failed; the hour is tried again/)

  // Room again, and the temporary file of an export that crashed mid-write: it is removed with a
  // log line, and the run writes every hour, whole.
  rmSync(filler)
  writeFileSync(join(out, '.queries-2024-05-15T10.parquet.tmp'), 'PAR1 half')
  t.assert.strictEqual((await exportParquetHours(db, out, NOW, logger)).length, 3)
  t.assert.ok(
    lines.some((l) => l.level === 40 && /half-written Parquet file/.test(String(l.msg))),
    JSON.stringify(lines)
  )
  t.assert.deepStrictEqual(readdirSync(out), [
    'queries-2024-05-14T23.parquet',
    'queries-2024-05-15T10.parquet',
    'queries-2024-05-15T11.parquet'
  ])
  t.assert.strictEqual((await readParquet(join(out, 'queries-2024-05-15T10.parquet'))).rows.length, 3)
})
