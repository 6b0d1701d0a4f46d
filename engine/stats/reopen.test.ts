import { test, type TestContext } from 'node:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../log/index.js'
import { beforeRemoval } from '../testing/temp.js'
import { tmpfsDir, tmpfsUnavailable } from '../testing/tmpfs.js'
import { until } from '../testing/wait.js'
import { openStatsDb, putProgress } from './db.js'
import { importClosedFiles, startStatsImporter } from './importer.js'
import { openReopeningStatsDb } from './reopening.js'
import { NOW, at, ledgerRows, rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'

const rows = (n: number, from: number, salt: string): ReturnType<typeof rec>[] =>
  Array.from({ length: n }, (_, i) =>
    rec(from + i * 10, `10.1.${(i >> 8) & 255}.${i & 255}`, `user${i % 500}`, `${salt}${i}.example`)
  )

// DuckDB invalidates a database whose checkpoint failed: every later statement on it fails. The api
// role's store (engine/stats/reopening.ts) must open it again by itself once there is room.

/** The store at `path`, reopened after `firstRetryMs` doubling to `maxRetryMs`, with what it reported: its outages' reasons and its reopens. */
function watched(
  path: string,
  firstRetryMs: number,
  maxRetryMs: number
): {
  db: ReturnType<typeof openReopeningStatsDb>
  outages: string[]
  reopened: number
} {
  const events = { outages: [] as string[], reopened: 0 }
  const db = openReopeningStatsDb(
    path,
    {},
    {
      firstRetryMs,
      maxRetryMs,
      onUnavailable: (reason) => events.outages.push(reason),
      onAvailable: () => events.reopened++
    }
  )
  return Object.assign(events, { db })
}

test('room, full, room again: the statistics store DuckDB invalidated on the full disk is opened again by itself, and every row of the files waiting and of the files after is imported once', async (t: TestContext) => {
  const why = tmpfsUnavailable()
  if (why !== undefined) {
    t.skip(why)
    return
  }
  const small = tmpfsDir(t, '8m')
  const env = statsTestEnv(t, { db: join(small.dir, 'statsdb') })
  const lines: Array<Record<string, unknown>> = []
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n'))
          if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
        cb()
      }
    })
  ) as Logger
  const events = watched(env.config.stats.db, 100, 500)
  const { db, outages } = events
  await db.ready
  const importer = startStatsImporter(env.config, logger, { statsDb: db, intervalMs: 300, now: () => NOW })
  // Before the unmount: the importer and the store let go of their files.
  beforeRemoval(t, async () => {
    await importer.close()
    await db.close()
  })

  // 1. Room.
  await writeFiles(env, rows(2000, at('2024-05-15', '08:00'), 'one'), 2)
  await until('phase one imported', async () => (await ledgerRows(db).catch(() => 0)) === 2000, 60_000)

  // 2. Full: the next import's commit meets the full disk.
  const filler = join(small.dir, 'filler')
  try {
    writeFileSync(filler, Buffer.alloc(64 * 1024 * 1024))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  }
  await writeFiles(env, rows(60_000, at('2024-05-15', '09:00'), 'two'), 1)
  await until(
    'the import failing',
    () => outages.length > 0 || lines.some((l) => l.msg === 'statistics import failed'),
    120_000
  )
  // The commit's checkpoint usually fails there; if the write-ahead log was what met the full disk,
  // the checkpoint that folds it does.
  if (outages.length === 0) await db.write((c) => c.run('CHECKPOINT')).catch(() => {})
  await until('the store unavailable', () => outages.length > 0, 120_000)
  t.assert.match(outages[0]!, /invalidated|FATAL/)
  t.assert.ok(db.unavailable !== undefined)

  // 3. Room again: no step by hand; the store opens again and takes the waiting rows and the new ones.
  rmSync(filler)
  await writeFiles(env, rows(3000, at('2024-05-15', '11:00'), 'three'), 3)
  await until('every row imported', async () => (await ledgerRows(db).catch(() => 0)) === 65_000, 180_000, 200)
  t.assert.ok(events.reopened >= 1)
  t.assert.strictEqual(db.unavailable, undefined)
  t.assert.strictEqual(await rawCount(db), 65_000)
})

// The importer reads a batch on a connection of its own and then writes it on that connection through the
// store (StatsDb.writeOn). When DuckDB invalidates the store meanwhile, that work ends on the store opened
// again: its write must go nowhere, the store opened again must stay open, and the instance given up must be
// closed before the next one opens (two instances of one file in a process write over each other: the
// files ledger of a 30-minute run then refused every later import with a duplicate key).
test('work begun on the statistics store DuckDB invalidated and ended after: the store is opened again only once the old instance is closed, the late write goes nowhere, the store opened again stays open, and every file is imported once', async (t: TestContext) => {
  const why = tmpfsUnavailable()
  if (why !== undefined) {
    t.skip(why)
    return
  }
  const small = tmpfsDir(t, '8m')
  const env = statsTestEnv(t, { db: join(small.dir, 'statsdb') })
  const events = watched(env.config.stats.db, 50, 200)
  const { db, outages } = events
  beforeRemoval(t, () => db.close())
  await db.ready
  await writeFiles(env, rows(2000, at('2024-05-15', '08:00'), 'one'), 2)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  t.assert.strictEqual(await ledgerRows(db), 2000)

  // Work on a connection of the store as it is now, which writes once the test lets it.
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let begun!: () => void
  const inWork = new Promise<void>((resolve) => (begun = resolve))
  const late = db
    .background(async (c) => {
      await c.run('SELECT 1')
      begun()
      await gate
      return await db.writeOn(c, (w) =>
        putProgress(w, 'queries-late.csv', { offset: 1, rows: 1, skipped: 0, done: true, updated: NOW })
      )
    })
    .then(
      () => undefined,
      (err: unknown) => err as Error & { code?: string }
    )
  await inWork

  // DuckDB invalidates the store: rows that stay in the write-ahead log (its file was made while there was
  // room), then the checkpoint that cannot write them into the database file on the full disk.
  const filler = join(small.dir, 'filler')
  try {
    writeFileSync(filler, Buffer.alloc(64 * 1024 * 1024))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  }
  for (let i = 0; i < 20 && outages.length === 0; i++) {
    await db.write((c) => c.run(`INSERT INTO meta VALUES ('ballast.${i}', ${i})`)).catch(() => {})
    await db.write((c) => c.run('CHECKPOINT')).catch(() => {})
  }
  await until('the store given up', () => outages.length > 0, 60_000)
  rmSync(filler)
  // Room again. The old instance still runs the work above: the store must not open beside it (it did,
  // within the first retry; a second is ample for that, and waiting here proves nothing else).
  const since = Date.now()
  await until(
    'the store open again, or a second with the old work still running',
    () => events.reopened > 0 || Date.now() - since > 1000
  )
  const early = events.reopened
  release()
  t.assert.strictEqual(early, 0, 'opened again while the instance given up was still open')
  const err = await late
  t.assert.ok(err !== undefined, 'the late write went nowhere')
  t.assert.match(String(err.code), /^ENGINE_(STATS_UNAVAILABLE|STORE_OPEN)$/)
  await until('the store open again', () => db.unavailable === undefined, 60_000)

  await writeFiles(env, rows(3000, at('2024-05-15', '11:00'), 'three'), 3)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  t.assert.strictEqual(await ledgerRows(db), 5000)
  t.assert.strictEqual(await rawCount(db), 5000)
  t.assert.strictEqual(outages.length, 1, `the store opened again was given up too: ${outages.join('; ')}`)
  t.assert.strictEqual(events.reopened, 1)
})

// DuckDB keeps a database open while a connection of it is: a report still reading when the store closes
// would keep the instance beside the next open of the file, and its own checkpoint at its end would write
// its older view into the file and delete the newer instance's write-ahead log.
test('closing the statistics store waits for a report still reading: when close resolves no connection of it is open, and the file opens again with every row', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  await db.ready
  await db.write((c) => putProgress(c, 'queries-a.csv', { offset: 1, rows: 1, skipped: 0, done: true, updated: NOW }))
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let begun!: () => void
  const reading = new Promise<void>((resolve) => (begun = resolve))
  const report = db.read(async (c) => {
    await c.run('SELECT 1')
    begun()
    await gate
    return 'read'
  })
  await reading
  let closed = false
  const closing = db.close().then(() => (closed = true))
  const since = Date.now()
  await until('closed, or a second with the report still reading', () => closed || Date.now() - since > 1000)
  release()
  t.assert.strictEqual(closed, false, 'closed while a report still held a connection')
  await closing
  t.assert.strictEqual(await report, 'read')

  const again = openStatsDb(env.config.stats.db)
  t.after(() => again.close())
  await again.write((c) =>
    putProgress(c, 'queries-b.csv', { offset: 1, rows: 2, skipped: 0, done: true, updated: NOW })
  )
  t.assert.strictEqual(await ledgerRows(again), 3)
})
