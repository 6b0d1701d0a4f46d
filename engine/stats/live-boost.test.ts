/**
 * The live path's lift (./live-boost.ts): armed for the oldest closed file of a real folder when that
 * file is live, fired `afterMs` after its close, ended with the run; never for a backlog.
 */
import { test, type TestContext } from 'node:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { tempDir } from '../testing/temp.js'
import { until } from '../testing/wait.js'
import { silentLogger } from '../log/index.js'
import { openStatsDb, type StatsDb } from './db.js'
import { closedAtOf, closedName } from '../querylog/files.js'
import { startStatsImporter } from './importer.js'
import { rawCount, rec, statsTestEnv, writeFiles } from '../testing/stats/fixtures.js'
import { LIVE_WINDOW_MS, armLiveBoost } from './live-boost.js'

function folderWith(t: TestContext, closedAt: number[]): string {
  const dir = tempDir(t, 'filterd-live-boost-')
  closedAt.forEach((ms, i) => writeFileSync(join(dir, closedName(ms, 4242, String(i))), 'x\n'))
  writeFileSync(join(dir, 'current-4242-1.csv.part'), '') // not a closed file: no deadline of its own
  return dir
}

test('closedAtOf reads back the close time a closed file name carries', (t: TestContext) => {
  const ms = Date.UTC(2026, 10, 27, 11, 47, 21, 237)
  t.assert.strictEqual(closedAtOf(closedName(ms, 1, 'a')), ms)
  t.assert.strictEqual(closedAtOf('current-1-2.csv.part'), undefined)
})

test('a live file past its deadline lifts the run at once, and the end of the run puts it back', async (t: TestContext) => {
  const now = Date.now()
  const dir = folderWith(t, [now - 1000, now - 5000]) // the oldest waited 5 s
  const calls: boolean[] = []
  const end = armLiveBoost(dir, 3000, (on) => calls.push(on), now)
  await until('the lift', () => calls.length === 1, 10_000, 10)
  t.assert.deepStrictEqual(calls, [true])
  end()
  t.assert.deepStrictEqual(calls, [true, false])
})

test('a live file within its deadline lifts only when the run is still busy at the deadline', async (t: TestContext) => {
  const now = Date.now()
  const dir = folderWith(t, [now])
  const quick: boolean[] = []
  armLiveBoost(dir, 60_000, (on) => quick.push(on), now)() // the run ended before the deadline
  const slow: boolean[] = []
  const end = armLiveBoost(dir, 100, (on) => slow.push(on), now)
  await until('the lift at the deadline', () => slow.length === 1, 10_000, 10)
  end()
  await sleep(200)
  t.assert.deepStrictEqual(quick, [], 'never lifted, nothing to put back')
  t.assert.deepStrictEqual(slow, [true, false])
})

test('a backlog (its oldest file closed over a minute ago), an empty folder or stats.live-boost-after 0 never lift', async (t: TestContext) => {
  const now = Date.now()
  const calls: boolean[] = []
  const ends = [
    armLiveBoost(folderWith(t, [now - LIVE_WINDOW_MS - 1000, now - 500]), 1, (on) => calls.push(on), now),
    armLiveBoost(folderWith(t, []), 1, (on) => calls.push(on), now),
    armLiveBoost(join(tempDir(t, 'filterd-live-boost-'), 'not-made-yet'), 1, (on) => calls.push(on), now),
    armLiveBoost(folderWith(t, [now - 5000]), 0, (on) => calls.push(on), now)
  ]
  // A lift armed for 1 ms would have fired well before this.
  await sleep(200)
  for (const end of ends) end()
  t.assert.deepStrictEqual(calls, [])
})

/** The api role's store, with its lift recorded and each read held `holdMs` (a busy host's slow import: a run starts with a read of its ledger). */
function recordingStore(db: StatsDb, holdMs: number): { db: StatsDb; lifts: boolean[] } {
  const lifts: boolean[] = []
  const held: StatsDb = {
    ...db,
    read: async (fn) => {
      await sleep(holdMs)
      return await db.read(fn)
    },
    boost: (on) => {
      lifts.push(on)
      return db.boost(on)
    }
  }
  return { db: held, lifts }
}

for (const after of [1, 0])
  test(`the importer lifts a run still busy with a live file stats.live-boost-after (${after} s) after its close`, async (t: TestContext) => {
    const env = statsTestEnv(t, { 'live-boost-after': after })
    mkdirSync(env.config.stats.dir, { recursive: true })
    const store = openStatsDb(env.config.stats.db)
    t.after(() => store.close())
    const { db, lifts } = recordingStore(store, 1500)
    const importer = startStatsImporter(env.config, silentLogger(), { statsDb: db, intervalMs: 3_600_000 })
    t.after(() => importer.close())
    await until('the first import', () => importer.last !== undefined, 30_000)
    await writeFiles(env, [rec(Date.now() - 1000, '10.0.0.1', 'alice', 'a.example')])
    await until('the closed file imported', async () => (await rawCount(store)) === 1, 60_000, 100)
    await until('the run ended', () => importer.last !== undefined && lifts.length !== 1, 30_000, 50)
    t.assert.deepStrictEqual(lifts, after === 0 ? [] : [true, false])
  })
