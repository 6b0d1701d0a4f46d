import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { openStatsDb } from './db.js'
import { ALL_USERS } from '../querylog/files.js'
import { pruneStats } from './maintenance.js'
import { buildMonth, buildMonths } from './month-build.js'
import { activityByDay } from './reports.js'
import { at } from '../testing/stats/fixtures.js'
import { APRIL, MAY, NOW, folded, reports, tables, twoStores } from '../testing/stats/month-stores.js'
import { failpointEnv } from '../failpoints.js'

test('retention drops month tables whole once their last day is out, and reports keep only the days kept', async (t: TestContext) => {
  const { db, ref } = await twoStores(t)
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW), 4)
  // On August 2nd retention keeps days from May 2nd: April's tables go, May's stay (May 1st is not read).
  const later = at('2024-08-02', '12:00')
  await pruneStats(db, 'UTC', later)
  await pruneStats(ref, 'UTC', later)
  const left = await folded(db)
  t.assert.ok(!left.includes(`mhours_${APRIL}`) && !left.includes(`mnames_${APRIL}`))
  t.assert.ok(left.includes(`mhours_${MAY}`) && left.includes(`mnames_${MAY}`))
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  const may = await activityByDay(db, ALL_USERS, MAY, MAY + 1)
  t.assert.strictEqual(may.datasets[0]!.data[0], 0, 'May 1st is out of retention')
  t.assert.ok(may.datasets[0]!.data[1]! > 0, 'May 2nd is kept')
  // On September 2nd May goes too.
  await pruneStats(db, 'UTC', at('2024-09-02', '12:00'))
  t.assert.ok(!(await folded(db)).some((n) => n.startsWith('m')))
})

test('a build stopped between its steps leaves copies nobody reads; the next run drops them and makes the month', async (t: TestContext) => {
  const { db, ref } = await twoStores(t)
  const expected = await reports(ref)
  const stopped = buildMonth(
    db,
    { kind: 'hours', month: MAY },
    {
      between: () => Promise.reject(new Error('stopped'))
    }
  )
  await t.assert.rejects(stopped, /stopped/)
  t.assert.ok((await tables(db)).some((n) => n.endsWith('__mbuild')))
  t.assert.deepStrictEqual(await reports(db), expected)
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW), 4)
  t.assert.ok(!(await tables(db)).some((n) => n.endsWith('__mbuild')))
  t.assert.deepStrictEqual(await reports(db), expected)
})

/** Runs `buildMonths` on the store at `dir` in a child process that pauses inside a build's transaction, and kills it there. */
function buildInChildAndKill(dir: string): Promise<{ signal: string | null; stdout: string }> {
  const module = new URL('./month-build.js', import.meta.url).href
  const db = new URL('./db.js', import.meta.url).href
  const code =
    `const { openStatsDb } = await import(${JSON.stringify(db)}); const { buildMonths } = await import(${JSON.stringify(module)});` +
    `const db = openStatsDb(${JSON.stringify(dir)}); await buildMonths(db, 'UTC', ${NOW});`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, ...failpointEnv({ 'stats.month.pause': '1' }) },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s
      if (stdout.includes('PAUSED month')) child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('close', (_code, signal) => resolve({ signal, stdout }))
  })
}

test('a kill inside a month build loses and doubles nothing; the next run makes the month', async (t: TestContext) => {
  const { env, db, ref } = await twoStores(t)
  const expected = await reports(ref)
  const before = await folded(db)
  await db.close() // one process at a time opens the store
  const killed = await buildInChildAndKill(env.config.stats.db)
  t.assert.strictEqual(killed.signal, 'SIGKILL')
  t.assert.match(killed.stdout, /PAUSED month hours/)
  const again = openStatsDb(env.config.stats.db)
  t.after(() => again.close())
  t.assert.deepStrictEqual(await folded(again), before)
  t.assert.deepStrictEqual(await reports(again), expected)
  t.assert.strictEqual(await buildMonths(again, 'UTC', NOW), 4)
  t.assert.ok(!(await tables(again)).some((n) => n.endsWith('__mbuild')))
  t.assert.deepStrictEqual(await reports(again), expected)
})
