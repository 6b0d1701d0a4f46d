import { test, type TestContext } from 'node:test'
import { readdirSync, rmSync } from 'node:fs'
import { silentLogger } from '../log/index.js'
import { fillDisk, smallTmpfs } from '../testing/tmpfs.js'
import { openStatsDb } from './db.js'
import { importClosedFiles } from './importer.js'
import { NOW, at, ledgerRows, rawCount, rec, statsTestEnv } from '../testing/stats/fixtures.js'
import { createCsvQueryLog, type CsvQueryLog } from '../querylog/writer.js'

const T0 = at('2024-05-15', '10:00')

function parts(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.endsWith('.csv.part'))
}

/** Writes `n` rows from `first` on and flushes them (a flush a second under load, here at once). */
async function writeRows(log: CsvQueryLog, first: number, n: number): Promise<void> {
  for (let i = first; i < first + n; i++)
    log.write(rec(T0 + i, `10.0.${(i >> 8) & 255}.${i & 255}`, `user${i % 50}`, `host${i}.example`))
  await log.flush()
}

test('a full statistics disk leaves at most one .part file per process, and none once it has room again', async (t: TestContext) => {
  const dir = smallTmpfs(t, '1m')
  if (dir === undefined) {
    t.skip('needs root to mount a small tmpfs')
    return
  }
  const env = statsTestEnv(t, { dir })
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  const filler = fillDisk(dir)
  // Every flush of the outage fails, rotations included; each used to leave an empty file behind.
  for (let i = 0; i < 200; i++) {
    await writeRows(log, i * 10, 10)
    t.assert.ok(parts(dir).length <= 1, `after failed flush ${i}: ${parts(dir).join(' ')}`)
    if (i % 20 === 19) await log.rotateNow()
  }
  t.assert.strictEqual(log.droppedRows, 2000)
  rmSync(filler)
  await writeRows(log, 2000, 10)
  t.assert.strictEqual(parts(dir).length, 1)
  await log.close()
  t.assert.deepStrictEqual(parts(dir), [], 'no .part file outlives the fault')
})

test('every row sent while the statistics disk fills up and empties again is either imported or counted dropped', async (t: TestContext) => {
  const dir = smallTmpfs(t, '1m')
  if (dir === undefined) {
    t.skip('needs root to mount a small tmpfs')
    return
  }
  const env = statsTestEnv(t, { dir })
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  let sent = 0
  const send = async (n: number): Promise<void> => {
    await writeRows(log, sent, n)
    sent += n
  }
  await send(1000)
  // Room for about 20 KB more: the next flush (about 60 KB) is taken in part, the ones after refused.
  const filler = fillDisk(dir, 20_000)
  for (let i = 0; i < 10; i++) await send(700)
  await log.rotateNow()
  await send(700)
  t.assert.ok(log.droppedRows > 0, 'the outage dropped rows')
  rmSync(filler)
  await send(1000)
  await log.close()

  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.strictEqual(r.skipped, 0, 'no damaged row in the files')
  t.assert.strictEqual(await ledgerRows(db), log.writtenRows)
  t.assert.strictEqual(await rawCount(db), log.writtenRows)
  t.assert.strictEqual(log.writtenRows + log.droppedRows, sent)
})
