import { test, type TestContext } from 'node:test'
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openStatsDb, type StatsDb } from './db.js'
import { ANONYMOUS_USER } from '../querylog/files.js'
import {
  NOW,
  SCENARIO,
  at,
  partitionsOf,
  rawCount,
  rec,
  statsTestEnv,
  writeFiles,
  type StatsTestEnv
} from '../testing/stats/fixtures.js'
import { importClosedFiles } from './importer.js'
import { applyRecords } from './legacy/chunk-path.js'
import { pruneStats } from './maintenance.js'
import { setFailpoint } from '../failpoints.js'
import { parseRecords } from '../querylog/csv.js'
import { activityByDay, activityByHour, detail, rawLastHour, topDomains } from './reports.js'
import { ReportTime, parseDay } from './time.js'
import { weekOf, weekPartitions } from './fold.js'
import type { QueryLogRecord } from '../querylog/index.js'
import { Writable } from 'node:stream'
import { pino } from 'pino'

const day = (s: string): number => parseDay(s)!

const weeksOf = (db: StatsDb): Promise<{ hours: number[]; names: number[] }> => db.read((c) => weekPartitions(c))

function openDb(t: TestContext, env: StatsTestEnv): StatsDb {
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  return db
}

test('imports the queries and answers every report with exact numbers', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO, 3)
  const db = openDb(t, env)
  const result = await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(result, { files: 3, rows: SCENARIO.length, skipped: 0, pruned: 0 })
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [], 'imported files are removed')
  const time = new ReportTime('UTC')

  const hour = await activityByHour(db, time, 'alice', day('2024-05-15'), day('2024-05-15'))
  t.assert.strictEqual(hour.labels.length, 24)
  t.assert.strictEqual(hour.labels[0], '2024-05-15 00:00:00')
  t.assert.strictEqual(hour.labels[23], '2024-05-15 23:00:00')
  const requests = new Array(24).fill(0)
  requests[10] = 3
  requests[11] = 1
  requests[12] = 2
  const blocks = new Array(24).fill(0)
  blocks[10] = 1
  t.assert.deepStrictEqual(hour.datasets, [
    { label: 'Requests', data: requests },
    { label: 'Blocks', data: blocks }
  ])

  t.assert.deepStrictEqual(await activityByDay(db, 'alice', day('2024-05-13'), day('2024-05-15')), {
    labels: ['2024-05-13', '2024-05-14', '2024-05-15'],
    datasets: [
      { label: 'Requests', data: [0, 1, 6] },
      { label: 'Blocks', data: [0, 0, 1] }
    ]
  })

  t.assert.deepStrictEqual(await topDomains(db, 'alice', day('2024-05-14'), day('2024-05-15'), 'all'), {
    labels: ['www.news.example', 'ads.example', 'moved.example', 'nx.example', 'old.example'],
    datasets: [
      { label: 'Requests', data: [3, 1, 1, 1, 1] },
      { label: 'NXdomain', data: [0, 0, 0, 1, 0] },
      { label: 'Blocks', data: [0, 1, 0, 0, 0] }
    ]
  })
  t.assert.deepStrictEqual(await topDomains(db, 'alice', day('2024-05-14'), day('2024-05-15'), 'www'), {
    labels: ['www.news.example'],
    datasets: [
      { label: 'Requests', data: [3] },
      { label: 'NXdomain', data: [0] },
      { label: 'Blocks', data: [0] }
    ]
  })

  t.assert.deepStrictEqual(await detail(db, 'alice', day('2024-05-14'), day('2024-05-15')), {
    timestamps: ['2024-05-14', '2024-05-15'],
    reports: [
      {
        labels: ['old.example'],
        cats: [[]],
        datasets: [
          { label: 'Requests', data: [1] },
          { label: 'NXdomain', data: [0] },
          { label: 'Blocks', data: [0] }
        ]
      },
      {
        labels: ['www.news.example', 'ads.example', 'moved.example', 'nx.example'],
        cats: [[5], [3], [], []],
        datasets: [
          { label: 'Requests', data: [3, 1, 1, 1] },
          { label: 'NXdomain', data: [0, 0, 0, 1] },
          { label: 'Blocks', data: [0, 1, 0, 0] }
        ]
      }
    ]
  })

  t.assert.deepStrictEqual(await rawLastHour(db, time, 'alice', NOW), {
    fields: ['created', 'nxdomain', 'address', 'host', 'blockedhost', 'reasom', 'cats', 'blockedcats'],
    data: [
      ['2024-05-15 11:30:00', 0, '10.0.0.9', 'moved.example', '', 'none', [], []],
      ['2024-05-15 12:10:00', 1, '10.0.0.1', 'nx.example', '', 'none', [], []],
      ['2024-05-15 12:20:00', 0, '10.0.0.1', 'www.news.example', '', 'none', [5], []]
    ]
  })

  // Two anonymous addresses are summed under the reserved name.
  t.assert.deepStrictEqual((await activityByDay(db, ANONYMOUS_USER, day('2024-05-15'), day('2024-05-15'))).datasets, [
    { label: 'Requests', data: [2] },
    { label: 'Blocks', data: [1] }
  ])
  t.assert.deepStrictEqual(
    (await rawLastHour(db, time, ANONYMOUS_USER, NOW)).data.map((r) => r[2]),
    ['192.0.2.7', '192.0.2.8']
  )
  t.assert.deepStrictEqual(
    (await activityByDay(db, 'bob', day('2024-05-15'), day('2024-05-15'))).datasets[0]!.data,
    [1]
  )
})

test('cuts the domain report at the 100 most requested domains', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const records: QueryLogRecord[] = []
  const expected: Array<[string, number]> = []
  for (let i = 0; i < 150; i++) {
    const n = 1 + Math.floor(i / 10)
    expected.push([`d${i}.example`, n])
    for (let k = 0; k < n; k++) records.push(rec(at('2024-05-15', '09:00') + k, '10.0.0.1', 'carol', `d${i}.example`))
  }
  await writeFiles(env, records)
  const db = openDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  expected.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  const top = expected.slice(0, 100)
  const chart = await topDomains(db, 'carol', day('2024-05-15'), day('2024-05-15'), 'all')
  t.assert.deepStrictEqual(
    chart.labels,
    top.map(([d]) => d)
  )
  t.assert.deepStrictEqual(
    chart.datasets[0]!.data,
    top.map(([, n]) => n)
  )
  t.assert.strictEqual((await detail(db, 'carol', day('2024-05-15'), day('2024-05-15'))).reports[0]!.labels.length, 100)
})

test('imports each file once: a rerun, a leftover finished file and a concurrent importer add nothing', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const records: QueryLogRecord[] = []
  for (let i = 0; i < 500; i++)
    records.push(
      rec(at('2024-05-15', '08:00') + i, `10.0.0.${i % 4}`, i % 2 === 0 ? 'alice' : null, `n${i % 7}.example`)
    )
  await writeFiles(env, records, 5)
  const dir = env.config.stats.dir
  const kept = join(env.root, 'kept.csv')
  const first = readdirSync(dir).sort()[0]!
  copyFileSync(join(dir, first), kept)
  const db = openDb(t, env)
  const [a, b] = await Promise.all([
    importClosedFiles(db, dir, 'UTC', { now: () => NOW, chunkRows: 7 }),
    importClosedFiles(db, dir, 'UTC', { now: () => NOW, chunkRows: 11 })
  ])
  t.assert.strictEqual(a.rows + b.rows, 500)
  copyFileSync(kept, join(dir, first)) // as if deleting it had failed after the import
  t.assert.deepStrictEqual(await importClosedFiles(db, dir, 'UTC', { now: () => NOW }), {
    files: 0,
    rows: 0,
    skipped: 0,
    pruned: 0
  })
  t.assert.deepStrictEqual(readdirSync(dir), [])
  const d = day('2024-05-15')
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d, d)).datasets[0]!.data, [250])
  t.assert.deepStrictEqual((await activityByDay(db, ANONYMOUS_USER, d, d)).datasets[0]!.data, [250])
})

test('drops raw partitions after a day, folds finished days into week tables, drops a week after three months', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, SCENARIO)
  const db = openDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  const time = new ReportTime('UTC')
  const [d14, d15] = [day('2024-05-14'), day('2024-05-15')]
  const week = weekOf(d14) // Monday 2024-05-13
  const hourOf = (d: string, hm: string): number => at(d, hm) / 3_600_000
  // Raw rows by UTC hour (23:00 on the 14th, 10:00, 11:00, 12:00 on the 15th); aggregates by local day.
  t.assert.deepStrictEqual(await partitionsOf(db), {
    raw: [
      hourOf('2024-05-14', '23:00'),
      hourOf('2024-05-15', '10:00'),
      hourOf('2024-05-15', '11:00'),
      hourOf('2024-05-15', '12:00')
    ],
    hours: [d15],
    names: [d15]
  })
  // The 14th has been over for more than an hour (FOLD_GRACE_MS): the import folded it into its week's tables.
  t.assert.deepStrictEqual(await weeksOf(db), { hours: [week], names: [week] })
  t.assert.strictEqual(await rawCount(db), 10)
  t.assert.strictEqual(await pruneStats(db, 'UTC', NOW + 3_600_000), 0)
  // At 2024-05-16 11:00 the hours up to 10:00-11:00 of the 15th are wholly older than a day: dropped, whole.
  t.assert.strictEqual(await pruneStats(db, 'UTC', at('2024-05-16', '11:00')), 2)
  t.assert.strictEqual(await rawCount(db), 6)
  t.assert.strictEqual((await rawLastHour(db, time, 'alice', at('2024-05-15', '12:30'))).data.length, 3)
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d14, d15)).datasets[0]!.data, [1, 6], 'aggregates stay')
  t.assert.deepStrictEqual(await partitionsOf(db), {
    raw: [hourOf('2024-05-15', '11:00'), hourOf('2024-05-15', '12:00')],
    hours: [],
    names: []
  })
  // 2024-08-15 keeps days from 2024-05-15: every raw hour goes; the week's tables stay (their last
  // day, the 19th, is kept) and the reports no longer count the 14th's rows in them.
  t.assert.strictEqual(await pruneStats(db, 'UTC', at('2024-08-15', '00:30')), 2)
  t.assert.deepStrictEqual(await partitionsOf(db), { raw: [], hours: [], names: [] })
  t.assert.deepStrictEqual(await weeksOf(db), { hours: [week], names: [week] })
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', d14, d15)).datasets[0]!.data, [0, 6])
  t.assert.deepStrictEqual(
    (await activityByHour(db, time, 'alice', d14, d15)).datasets[0]!.data.reduce((a, b) => a + b),
    6
  )
  t.assert.deepStrictEqual((await topDomains(db, 'alice', d14, d15, 'all')).datasets[0]!.data, [3, 1, 1, 1])
  t.assert.strictEqual((await detail(db, 'alice', d14, d15)).reports[0]!.labels.length, 0)
  // Once the week's last day is older than three months (2024-08-20 keeps days from 2024-05-20), its tables go, whole.
  t.assert.strictEqual(await pruneStats(db, 'UTC', at('2024-08-19', '00:30')), 0)
  t.assert.strictEqual(await pruneStats(db, 'UTC', at('2024-08-20', '00:30')), 2)
  t.assert.deepStrictEqual(await weeksOf(db), { hours: [], names: [] })
  t.assert.deepStrictEqual(await partitionsOf(db), { raw: [], hours: [], names: [] })
})

test('compaction keeps every report as it was: partials of many imports summed into one row per key', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openDb(t, env)
  // The scenario imported in ten imports of one row each: ten partial rows per day partition.
  for (const r of SCENARIO) {
    await writeFiles(env, [r])
    await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  }
  const d = day('2024-05-15')
  const reports = async (): Promise<unknown[]> => [
    await activityByDay(db, 'alice', d - 1, d),
    await activityByHour(db, new ReportTime('UTC'), 'alice', d, d),
    await topDomains(db, 'alice', d - 1, d, 'all'),
    await detail(db, 'alice', d - 1, d)
  ]
  const rowsOf = async (table: string): Promise<number> =>
    await db.read(async (c) =>
      Number((await c.runAndReadAll(`SELECT count(*)::DOUBLE FROM ${table}`)).getRows()[0]![0])
    )
  // Ten imports appended partials (today is first compacted 10 minutes after the first prune).
  const partialsBefore = await rowsOf(`names_${d}`)
  const before = await reports()
  // Later the same day, today's partitions are compacted again (at most every 10 minutes).
  await pruneStats(db, 'UTC', NOW + 11 * 60_000)
  t.assert.ok((await rowsOf(`names_${d}`)) < partialsBefore, 'fewer rows after compaction')
  t.assert.deepStrictEqual(await reports(), before)
  t.assert.deepStrictEqual((before[2] as { labels: string[] }).labels, [
    'www.news.example',
    'ads.example',
    'moved.example',
    'nx.example',
    'old.example'
  ])
})

test('today is compacted sooner once its partials outnumber its compacted rows, at most once a minute', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const db = openDb(t, env)
  const d = day('2024-05-15')
  const rowsOf = async (): Promise<number> =>
    await db.read(async (c) =>
      Number((await c.runAndReadAll(`SELECT count(*)::DOUBLE FROM names_${d}`)).getRows()[0]![0])
    )
  // Ten imports of one row each at NOW: the first prune starts today's clock with one partial row.
  for (const r of SCENARIO) {
    await writeFiles(env, [r])
    await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  }
  const partials = await rowsOf()
  t.assert.ok(partials >= 8, `partial rows: ${partials}`)
  // Two minutes on, at the default threshold (200,000 partial rows), nothing is compacted before the 10 minutes.
  await pruneStats(db, 'UTC', NOW + 2 * 60_000)
  t.assert.strictEqual(await rowsOf(), partials)
  setFailpoint('stats.compact-today.min-rows', '5')
  t.after(() => setFailpoint('stats.compact-today.min-rows', undefined))
  // With the partials past the threshold and the rows the clock started with, within a minute: still not.
  await pruneStats(db, 'UTC', NOW + 50_000)
  t.assert.strictEqual(await rowsOf(), partials)
  await pruneStats(db, 'UTC', NOW + 3 * 60_000)
  const compacted = await rowsOf()
  t.assert.ok(compacted < partials, `compacted ${compacted} of ${partials}`)
  // The next comes once the partials since outnumber the rows this one left: one more row is not enough.
  await writeFiles(env, [rec(NOW, '10.0.0.1', 'alice', 'late.example')])
  await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW + 5 * 60_000 })
  const dirty = await db.read(async (c) =>
    Number((await c.runAndReadAll(`SELECT count(*)::DOUBLE FROM meta WHERE key = 'dirty.${d}'`)).getRows()[0]![0])
  )
  t.assert.strictEqual(dirty, 1, 'today is still waiting for its compaction')
  t.assert.ok((await rowsOf()) > compacted)
})

test('does not aggregate rows older than the retention window', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, [rec(at('2024-01-01', '10:00'), '10.0.0.1', 'alice', 'ancient.example'), ...SCENARIO])
  const db = openDb(t, env)
  const r = await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW })
  t.assert.strictEqual(r.rows, SCENARIO.length + 1)
  // Only May's days were aggregated: the 14th is in its week's table (folded), the 15th in its day table.
  t.assert.deepStrictEqual((await partitionsOf(db)).hours, [day('2024-05-15')])
  t.assert.deepStrictEqual(await weeksOf(db), { hours: [day('2024-05-13')], names: [day('2024-05-13')] })
  t.assert.strictEqual(await rawCount(db), SCENARIO.length)
})

test('labels hours and days in stats.timezone', async (t: TestContext) => {
  const env = statsTestEnv(t)
  // 2024-05-14 19:00 UTC is 2024-05-15 00:30 in India (UTC+05:30).
  await writeFiles(env, [
    rec(at('2024-05-14', '19:00'), '10.0.0.1', 'alice', 'a.example'),
    rec(at('2024-05-14', '18:00'), '10.0.0.1', 'alice', 'b.example')
  ])
  const db = openDb(t, env)
  await importClosedFiles(db, env.config.stats.dir, 'Asia/Kolkata', { now: () => NOW })
  const time = new ReportTime('Asia/Kolkata')
  t.assert.deepStrictEqual(
    (await activityByDay(db, 'alice', day('2024-05-14'), day('2024-05-15'))).datasets[0]!.data,
    [1, 1]
  )
  const hours = await activityByHour(db, time, 'alice', day('2024-05-15'), day('2024-05-15'))
  t.assert.strictEqual(hours.labels[0], '2024-05-15 00:30:00')
  t.assert.strictEqual(hours.datasets[0]!.data[0], 1)
  t.assert.strictEqual(hours.labels.length, 24)
})

test("imports a crashed writer's file and skips its half-written last line", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, SCENARIO.slice(0, 3))
  const [closed] = readdirSync(dir)
  // A .part file of a process that no longer exists (pid 2^22 + 1 is above Linux's pid_max).
  const { readFileSync, rmSync } = await import('node:fs')
  const text = readFileSync(join(dir, closed!), 'utf8')
  rmSync(join(dir, closed!))
  writeFileSync(join(dir, 'current-4194305-1715774400000.csv.part'), text + '1715774400000,0,10.0.0.1,half')
  const db = openDb(t, env)
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(r, { files: 1, rows: 3, skipped: 1, pruned: 0 })
  t.assert.deepStrictEqual(readdirSync(dir), [])
})

test('a truncated file: every complete row is imported, the cut row is skipped with a clear log line', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, SCENARIO)
  const [name] = readdirSync(dir)
  const { readFileSync } = await import('node:fs')
  const text = readFileSync(join(dir, name!))
  // The last row loses its end (a full disk, a copy cut short): its first fields are still there.
  writeFileSync(join(dir, name!), text.subarray(0, text.length - 12))
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
  )
  const db = openDb(t, env)
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW, logger })
  t.assert.deepStrictEqual(r, { files: 1, rows: SCENARIO.length - 1, skipped: 1, pruned: 0 })
  const warn = lines.find((l) => l.level === 40)
  t.assert.ok(warn !== undefined, JSON.stringify(lines))
  t.assert.strictEqual(warn.file, name)
  t.assert.match(String(warn.msg), /truncated line.*skipped, every complete row is imported/)
  // The rows before the cut are all there; the cut one (alice's last www.news.example) is not.
  t.assert.deepStrictEqual(
    (await activityByDay(db, 'alice', day('2024-05-15'), day('2024-05-15'))).datasets[0]!.data,
    [5]
  )
  t.assert.strictEqual(await rawCount(db), SCENARIO.length - 1)
})

test('DuckDB reads the CSV as the writer quotes it: commas, quotes, line breaks and UTF-8 in a field; a bad record is counted as skipped', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  const odd = ['a,b.example', 'quo"te.example', 'line\r\nbreak.example', 'bücher.example']
  await writeFiles(
    env,
    odd.map((name, i) => rec(at('2024-05-15', '10:00') + i, '10.0.0.1', 'alice', name, { nxdomain: i === 3 }))
  )
  const [name] = readdirSync(dir)
  const { appendFileSync } = await import('node:fs')
  appendFileSync(join(dir, name!), ',0,10.0.0.1,no-time.example,,none,,,alice\r\n')
  const db = openDb(t, env)
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(r, { files: 1, rows: 4, skipped: 1, pruned: 0 })
  const d = day('2024-05-15')
  t.assert.deepStrictEqual([...(await topDomains(db, 'alice', d, d, 'all')).labels].sort(), [...odd].sort())
  const raw = await rawLastHour(db, new ReportTime('UTC'), 'alice', at('2024-05-15', '10:30'))
  t.assert.deepStrictEqual(
    raw.data.map((row) => row[3]),
    odd,
    'raw rows in file order'
  )
})

test('a file an older importer left half-imported (ledger offset > 0) is continued from its offset, each row once', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, SCENARIO)
  const [name] = readdirSync(dir)
  const { readFileSync } = await import('node:fs')
  const text = readFileSync(join(dir, name!), 'latin1')
  // The header and the first four records, as one chunk of the chunked importer of before.
  const records: string[][] = []
  const end = parseRecords(text, 0, 5, records)
  const db = openDb(t, env)
  t.assert.ok(await applyRecords(db, 'UTC', name!, 0, end, false, records, () => NOW))
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(r, { files: 1, rows: SCENARIO.length - 4, skipped: 0, pruned: 0 })
  t.assert.strictEqual(await rawCount(db), SCENARIO.length)
  t.assert.deepStrictEqual(
    (await activityByDay(db, 'alice', day('2024-05-14'), day('2024-05-15'))).datasets[0]!.data,
    [1, 6]
  )
})

test('a file with an extra trailing column (a newer writer): every row is imported, the extra field ignored', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, SCENARIO)
  const [name] = readdirSync(dir)
  const { readFileSync } = await import('node:fs')
  const lines = readFileSync(join(dir, name!), 'utf8').split('\r\n')
  // Every record ends with the user field (no field here holds a line break), so a field appended to each line is a tenth column.
  const widened = lines.map((l, i) => (l === '' ? l : i === 0 ? `${l},client_id` : `${l},client-${i}`)).join('\r\n')
  writeFileSync(join(dir, name!), widened)
  const db = openDb(t, env)
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(r, { files: 1, rows: SCENARIO.length, skipped: 0, pruned: 0 })
  t.assert.deepStrictEqual((await activityByDay(db, 'alice', day('2024-05-15'), day('2024-05-15'))).datasets, [
    { label: 'Requests', data: [6] },
    { label: 'Blocks', data: [1] }
  ])
})
