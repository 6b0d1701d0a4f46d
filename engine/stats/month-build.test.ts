import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { TABLES_SQL, openStatsDb, type StatsDb } from './db.js'
import { ALL_USERS, ANONYMOUS_USER } from './files.js'
import { FOLD_EVERY_MS, foldDays } from './fold.js'
import { importClosedFiles, pruneStats } from './importer.js'
import { buildMonth, buildMonths, dueMonths, monthBuildSettled } from './month-build.js'
import { overview } from './overview.js'
import { activityByDay, activityByHour, detail, topDomains } from './reports.js'
import { at, partitionsOf, queriesOfDay, statsTestEnv, writeFiles, type StatsTestEnv } from './testing/fixtures.js'
import { ReportTime, parseDay } from './time.js'
import type { QueryLogRecord } from '../querylog/index.js'

const day = (s: string): number => parseDay(s)!
// Every day due folds in one prune here, however loaded the machine.
process.env.FILTERD_STATS_FOLD_STEP_MS = '600000'
// The importer's own month builds are off but in the test of them: the others make months step by step.
process.env.FILTERD_STATS_MONTH_BUILD = '0'
// A month is copied in ranges of users of about this many rows: several ranges here.
process.env.FILTERD_STATS_MONTH_CHUNK_ROWS = '40'
const time = new ReportTime('UTC')
/** Before every import of these tests: nothing is over for an hour yet, so nothing folds and no month is due. */
const EARLY = at('2024-04-01', '00:10')
/** April and May are over, and so is every week overlapping them (the last ends on Sunday, June 2nd). */
const NOW = at('2024-06-12', '12:30')
const [APRIL, MAY, JUNE] = [day('2024-04-01'), day('2024-05-01'), day('2024-06-01')]
// April 1st 2024 was a Monday: the week of April 29th straddles April and May, the week of May 27th May and June.
const DAYS = [
  '2024-04-03',
  '2024-04-28',
  '2024-04-30',
  '2024-05-01',
  '2024-05-02',
  '2024-05-20',
  '2024-05-31',
  '2024-06-01',
  '2024-06-02',
  '2024-06-10',
  '2024-06-12'
]
/** Ranges that start and end inside months, weeks and days on either side of each boundary. */
const RANGES: Array<[string, string]> = [
  ['2024-04-01', '2024-06-12'],
  ['2024-04-29', '2024-05-05'],
  ['2024-04-30', '2024-05-01'],
  ['2024-05-02', '2024-05-31'],
  ['2024-05-31', '2024-06-02'],
  ['2024-06-01', '2024-06-12'],
  ['2024-04-28', '2024-04-28']
]

const ALL = DAYS.flatMap((d, i) => queriesOfDay(d, 40, i))

/** Every report over every range (every kind of user over the whole range, one user and the totals over the others), and the overview. */
async function reports(db: StatsDb): Promise<unknown[]> {
  const out: unknown[] = []
  for (const [a, b] of RANGES) {
    const [from, to] = [day(a), day(b)]
    for (const u of from === APRIL ? ['alice', 'bob', ANONYMOUS_USER, ALL_USERS] : ['alice', ALL_USERS]) {
      out.push(await activityByDay(db, u, from, to))
      out.push(await activityByHour(db, time, u, from, to))
      out.push(await topDomains(db, u, from, to, 'all'))
      out.push(await topDomains(db, u, from, to, 'www'))
      out.push(await detail(db, u, from, to))
    }
  }
  out.push(await overview(db, time, APRIL, day('2024-06-12')))
  return out
}

async function importAt(env: StatsTestEnv, db: StatsDb, records: QueryLogRecord[], now: number): Promise<void> {
  await writeFiles(env, records, 3)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => now })
  await monthBuildSettled(db)
}

const tables = (db: StatsDb): Promise<string[]> =>
  db.read(async (c) => (await c.runAndReadAll(`${TABLES_SQL} ORDER BY 1`)).getRows().map((r) => String(r[0])))
const folded = async (db: StatsDb): Promise<string[]> => (await tables(db)).filter((n) => /^[wm](hours|names)_/.test(n))

/**
 * Two stores given the same queries early (nothing folded): `ref` keeps its day tables, `db` folds its
 * finished days into week tables at NOW; both answer the same.
 */
async function twoStores(
  t: TestContext
): Promise<{ env: StatsTestEnv; db: StatsDb; refEnv: StatsTestEnv; ref: StatsDb }> {
  const env = statsTestEnv(t)
  const refEnv = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  const ref = openStatsDb(refEnv.config.stats.db)
  t.after(() => Promise.all([db.close(), ref.close()]))
  await importAt(env, db, ALL, EARLY)
  await importAt(refEnv, ref, ALL, EARLY)
  await pruneStats(db, 'UTC', NOW)
  return { env, db, refEnv, ref }
}

/** The week tables as the folds leave them at NOW: the Mondays of the weeks of DAYS but today's. */
const WEEKS = ['2024-04-01', '2024-04-22', '2024-04-29', '2024-05-20', '2024-05-27', '2024-06-10'].map(day)
const weekNames = (weeks: readonly number[]): string[] =>
  [...weeks.map((w) => `whours_${w}`), ...weeks.map((w) => `wnames_${w}`)].sort()

test('month tables made from finished weeks change no report, across month, week and day boundaries', async (t: TestContext) => {
  const { env, db, refEnv, ref } = await twoStores(t)
  const expected = await reports(ref)
  t.assert.ok((expected[0] as { datasets: Array<{ data: number[] }> }).datasets[0]!.data.some((v) => v > 0))
  t.assert.deepStrictEqual(await folded(db), weekNames(WEEKS))
  t.assert.deepStrictEqual(await reports(db), expected)
  // April and May are due; June is not (its weeks are not over), nor is anything at a time before May's last week ends.
  const names = await tables(db)
  t.assert.deepStrictEqual(dueMonths(names, 'UTC', NOW), [
    { kind: 'hours', month: APRIL },
    { kind: 'names', month: APRIL },
    { kind: 'hours', month: MAY },
    { kind: 'names', month: MAY }
  ])
  t.assert.deepStrictEqual(
    dueMonths(names, 'UTC', at('2024-06-02', '23:30')).map((u) => u.month),
    [APRIL, APRIL]
  )

  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW), 4)
  const afterBuild = [
    ...weekNames([day('2024-05-27'), day('2024-06-10')]),
    `mhours_${APRIL}`,
    `mhours_${MAY}`,
    `mnames_${APRIL}`,
    `mnames_${MAY}`
  ].sort()
  // The weeks inside April and May are gone; the week straddling them is gone too (its days are in the two
  // months); the one straddling May and June keeps its June days.
  t.assert.deepStrictEqual(await folded(db), afterBuild)
  t.assert.deepStrictEqual(
    await db.read(async (c) =>
      (await c.runAndReadAll(`SELECT DISTINCT day FROM wnames_${day('2024-05-27')} ORDER BY 1`))
        .getRows()
        .map((r) => Number(r[0]))
    ),
    [JUNE, JUNE + 1]
  )
  t.assert.deepStrictEqual(await reports(db), expected)
  // Copied in ranges of users, each month table is sorted by (user, day) all the same.
  for (const m of [`mhours_${APRIL}`, `mnames_${APRIL}`, `mhours_${MAY}`, `mnames_${MAY}`]) {
    const order = await db.read(async (c) =>
      (
        await c.runAndReadAll(
          `SELECT count(*)::INTEGER, count(*) FILTER (WHERE p > ("user", day))::INTEGER FROM (SELECT "user", day, lag(("user", day)) OVER (ORDER BY rowid) AS p FROM ${m})`
        )
      ).getRows()
    )
    t.assert.ok((order[0]![0]! as number) > 40, `${m} has rows for several ranges`)
    t.assert.strictEqual(order[0]![1], 0, `${m} is sorted by user, day`)
  }
  // Nothing more is due: a second run makes nothing.
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW + 1000), 0)

  // Late files: for a day of a month made (May 2nd) and for a June day of the straddling week.
  const late = [...queriesOfDay('2024-05-02', 30, 9), ...queriesOfDay('2024-06-01', 20, 8)]
  await importAt(env, db, late, NOW + 60_000)
  await importAt(refEnv, ref, late, EARLY)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // Folded: May 2nd into May's table (appended), June 1st into its week; no day is in two folded tables.
  await pruneStats(db, 'UTC', NOW + FOLD_EVERY_MS + 120_000)
  t.assert.deepStrictEqual((await partitionsOf(db)).names, [day('2024-06-12')])
  t.assert.deepStrictEqual(await folded(db), afterBuild)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
})

test('a store with no month tables and a fresh store answer as before; no week, no month', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW), 0)
  t.assert.deepStrictEqual(await folded(db), [])
  const empty = await activityByDay(db, 'alice', APRIL, JUNE)
  t.assert.ok(empty.datasets.every((d) => d.data.every((v) => v === 0)))
})

test('a month made while imports and folds go on keeps every row exactly once', async (t: TestContext) => {
  const { env, db, refEnv, ref } = await twoStores(t)
  // Today's queries imported between the two steps: the weeks do not change, the month is swapped in.
  const today = queriesOfDay('2024-06-12', 25, 5)
  const swapped = await buildMonth(
    db,
    { kind: 'names', month: APRIL },
    {
      between: () => importAt(env, db, today, NOW + 1000)
    }
  )
  t.assert.strictEqual(swapped, true)
  await importAt(refEnv, ref, today, EARLY)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))

  // A late file for May 20th folded into its week between the steps: May's weeks changed, so the copy is dropped.
  const late = queriesOfDay('2024-05-20', 30, 7)
  const changed = await buildMonth(
    db,
    { kind: 'names', month: MAY },
    {
      between: async () => {
        await importAt(env, db, late, NOW + 2000)
        await db.write((c) => foldDays(db, c, 'UTC', NOW + 2000, { force: true }))
      }
    }
  )
  t.assert.strictEqual(changed, false)
  await importAt(refEnv, ref, late, EARLY)
  t.assert.ok(
    !(await tables(db)).some((n) => n.endsWith('__mbuild')),
    'the copies of a build whose weeks changed are dropped'
  )
  t.assert.ok(!(await folded(db)).includes(`mnames_${MAY}`))
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
  // Made again later, it holds the late rows too.
  t.assert.strictEqual(await buildMonths(db, 'UTC', NOW + 3000), 3)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))

  // And imports running while the months of a second store are made (no hook: each at its own pace).
  const env2 = statsTestEnv(t)
  const db2 = openStatsDb(env2.config.stats.db)
  t.after(() => db2.close())
  await importAt(env2, db2, [...ALL, ...late], EARLY)
  await pruneStats(db2, 'UTC', NOW)
  const building = buildMonths(db2, 'UTC', NOW)
  for (let i = 0; i < 5; i++) await importAt(env2, db2, today.slice(i * 5, i * 5 + 5), NOW + 1000 + i)
  t.assert.strictEqual(await building, 4)
  t.assert.deepStrictEqual(await reports(db2), await reports(ref))
})

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
      env: { ...process.env, FILTERD_STATS_MONTH_PAUSE: '1' },
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

test('the importer makes the months due beside its imports', async (t: TestContext) => {
  const { env, db, refEnv, ref } = await twoStores(t)
  delete process.env.FILTERD_STATS_MONTH_BUILD
  t.after(() => {
    process.env.FILTERD_STATS_MONTH_BUILD = '0'
    // A month is copied in ranges of users of about this many rows: several ranges here.
    process.env.FILTERD_STATS_MONTH_CHUNK_ROWS = '40'
  })
  const today = queriesOfDay('2024-06-12', 10, 3)
  await importAt(env, db, today, NOW + 1000) // waits for the build the import started
  t.assert.deepStrictEqual(
    (await folded(db)).filter((n) => n.startsWith('m')),
    [`mhours_${APRIL}`, `mhours_${MAY}`, `mnames_${APRIL}`, `mnames_${MAY}`]
  )
  await importAt(refEnv, ref, today, EARLY)
  t.assert.deepStrictEqual(await reports(db), await reports(ref))
})
