import { test, type TestContext } from 'node:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../log/index.js'
import { beforeRemoval } from '../testing/temp.js'
import { tmpfsDir, tmpfsUnavailable } from '../testing/tmpfs.js'
import { until } from '../testing/wait.js'
import { startStatsImporter } from './importer.js'
import { openReopeningStatsDb } from './reopening.js'
import { NOW, at, ledgerRows, rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'

const rows = (n: number, from: number, salt: string): ReturnType<typeof rec>[] =>
  Array.from({ length: n }, (_, i) =>
    rec(from + i * 10, `10.1.${(i >> 8) & 255}.${i & 255}`, `user${i % 500}`, `${salt}${i}.example`)
  )

// DuckDB invalidates a database whose checkpoint failed: every later statement on it fails. The api
// role's store (engine/stats/reopening.ts) must open it again by itself once there is room.
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
  const outages: string[] = []
  let reopened = 0
  const db = openReopeningStatsDb(
    env.config.stats.db,
    {},
    {
      firstRetryMs: 100,
      maxRetryMs: 500,
      onUnavailable: (reason) => outages.push(reason),
      onAvailable: () => reopened++
    }
  )
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
  t.assert.ok(reopened >= 1)
  t.assert.strictEqual(db.unavailable, undefined)
  t.assert.strictEqual(await rawCount(db), 65_000)
})
