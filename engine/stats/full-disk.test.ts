import { test, type TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../log/index.js'
import { until } from '../testing/wait.js'
import { openStatsDb } from './db.js'
import { startStatsImporter } from './importer.js'
import { activityByDay } from './reports.js'
import { parseDay } from './time.js'
import { NOW, at, ledgerRows, rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'

test('a full disk under the statistics store loses no row: the import fails with a clear log line, the files stay, and the next import takes every row once', async (t: TestContext) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root to mount a small tmpfs')
    return
  }
  // The store on a small tmpfs of its own (outside the test's temp dir, whose removal would meet the mount).
  const small = mkdtempSync(join(tmpdir(), 'filterd-stats-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', small])
  // One hook, in this order: the store lets go of its files before the unmount.
  const closers: Array<() => Promise<void>> = []
  t.after(async () => {
    for (const close of closers.reverse()) await close()
    execFileSync('umount', [small])
    rmSync(small, { recursive: true })
  })
  const env = statsTestEnv(t, { db: join(small, 'statsdb') })
  const ROWS = 60_000
  const records = Array.from({ length: ROWS }, (_, i) =>
    rec(at('2024-05-15', '10:00') + i * 10, `10.0.${(i >> 8) & 255}.${i & 255}`, `user${i % 5000}`, `host${i}.example`)
  )
  await writeFiles(env, records, 3)
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
  const db = openStatsDb(env.config.stats.db)
  closers.push(() => db.close())
  await db.ready
  const importer = startStatsImporter(env.config, logger, { statsDb: db, intervalMs: 3_600_000, now: () => NOW })
  closers.push(() => importer.close())
  // The timer's first import runs at once and meets the full disk.
  await until('the failed import', () => lines.some((l) => l.msg === 'statistics import failed'), 120_000)
  const failed = lines.find((l) => l.msg === 'statistics import failed')!
  t.assert.match(JSON.stringify(failed.err), /No space left on device|out of space|disk/i)
  t.assert.ok(readdirSync(env.config.stats.dir).length > 0, 'the CSV files stay until their rows are in the store')
  t.assert.ok(importer.last !== undefined && 'error' in importer.last, '/health reports the failed import')

  // Room again: the next import takes every row, once.
  execFileSync('mount', ['-o', 'remount,size=256m', small])
  const r = await importer.importNow()
  t.assert.strictEqual(r.skipped, 0)
  t.assert.strictEqual(await ledgerRows(db), ROWS)
  t.assert.strictEqual(await rawCount(db), ROWS)
  const day = parseDay('2024-05-15')!
  t.assert.strictEqual((await activityByDay(db, 'user7', day, day)).datasets[0]!.data[0], ROWS / 5000)
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [])
})
