import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ReportTime, activityByDay, activityByHour, detail, openStatsDb, topDomains } from '../engine/stats/index.js'
import type { StatsDb } from '../engine/stats/db.js'
import { ALL_USERS } from '../engine/querylog/files.js'
import { weekPartitions } from '../engine/stats/fold.js'
import { importClosedFiles } from '../engine/stats/importer.js'
import { partitionsOf, rec, statsTestEnv, writeFiles } from '../engine/testing/stats/fixtures.js'
import type { QueryLogRecord } from '../engine/querylog/index.js'
import { failpointEnv } from '../engine/failpoints.js'

const FILTERD = fileURLToPath(new URL('./filterd.js', import.meta.url))
const DAY_MS = 86_400_000

/** Runs `filterd stats-import --no-wait`; with `pause`, kills it with SIGKILL once the fold says it paused. */
function importInChild(
  configFile: string,
  pause: boolean
): Promise<{ code: number | null; signal: string | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    // Every day due in one step (a step goes on while it lasts under FOLD_STEP_MS), however loaded the machine.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...failpointEnv({
        'stats.fold.step-ms': '600000',
        'stats.import.pause': undefined,
        'stats.fold.pause': pause ? '1' : undefined
      })
    }
    const child = spawn(process.execPath, [FILTERD, 'stats-import', '--config', configFile, '--no-wait'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s
      if (pause && stdout.includes('PAUSED fold')) child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout }))
  })
}

test('a kill inside the fold of finished days into week tables loses and doubles nothing', async (t: TestContext) => {
  const time = new ReportTime('UTC')
  // Queries on the three days before yesterday (real clock: the child imports with it), all over long since.
  const first = time.dayOf(Date.now()) - 4
  const records: QueryLogRecord[] = []
  for (let i = 0; i < 300; i++) {
    const at = (first + (i % 3)) * DAY_MS + (i % 86) * 1000_000
    records.push(rec(at, '10.0.0.1', i % 4 === 0 ? null : 'alice', `n${i % 9}.example`, { cats: [i % 3] }))
  }
  const env = statsTestEnv(t)
  await writeFiles(env, records, 3)
  // The reference: the same queries imported "early" (nothing over yet, so nothing folded).
  const refEnv = statsTestEnv(t)
  await writeFiles(refEnv, records, 3)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => ref.close())
  await importClosedFiles(ref, refEnv.config.stats.dir, 'UTC', { now: () => first * DAY_MS })
  const reports = async (db: StatsDb): Promise<unknown[]> => {
    const out: unknown[] = []
    for (const u of ['alice', ALL_USERS]) {
      out.push(await activityByDay(db, u, first - 1, first + 3))
      out.push(await activityByHour(db, time, u, first, first + 2))
      out.push(await topDomains(db, u, first - 1, first + 3, 'all'))
      out.push(await detail(db, u, first, first + 2))
    }
    return out
  }
  const expected = await reports(ref)

  const killed = await importInChild(env.configFile, true)
  t.assert.strictEqual(killed.signal, 'SIGKILL', killed.stdout)
  const after = async (check: (db: StatsDb) => Promise<void>): Promise<void> => {
    const db = openStatsDb(env.config.stats.db)
    try {
      await check(db)
    } finally {
      await db.close()
    }
  }
  // Killed before the fold's commit: the import's own transaction stands, the fold left no trace.
  await after(async (db) => {
    t.assert.deepStrictEqual(await db.read((c) => weekPartitions(c)), { hours: [], names: [] })
    t.assert.deepStrictEqual((await partitionsOf(db)).hours, [first, first + 1, first + 2])
    t.assert.deepStrictEqual(await reports(db), expected)
  })
  // The next start folds what is due (no file left to import), once.
  const again = await importInChild(env.configFile, false)
  t.assert.strictEqual(again.code, 0, again.stdout)
  await after(async (db) => {
    t.assert.ok((await db.read((c) => weekPartitions(c))).hours.length > 0)
    t.assert.deepStrictEqual((await partitionsOf(db)).hours, [])
    t.assert.deepStrictEqual(await reports(db), expected)
  })
})
