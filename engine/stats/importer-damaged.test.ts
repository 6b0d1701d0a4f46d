import { test, type TestContext } from 'node:test'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../log/index.js'
import type { QueryLogRecord } from '../querylog/index.js'
import { openStatsDb, type StatsDb } from './db.js'
import { importClosedFiles } from './importer.js'
import { openSegmentWriter } from './segment.js'
import { topDomains } from './reports.js'
import { parseDay } from './time.js'
import { NOW, at, rawCount, rec, statsTestEnv, writeFiles, type StatsTestEnv } from '../testing/stats/fixtures.js'

const ROWS = 90 // fewer than the 100 domains a top-domains report lists, so it lists every one
const DAY = parseDay('2024-05-15')!

function openDb(t: TestContext, env: StatsTestEnv): StatsDb {
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  return db
}

function captureLogs(): { logger: Logger; lines: Array<Record<string, unknown>> } {
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
  return { logger, lines }
}

function rows(n: number): QueryLogRecord[] {
  return Array.from({ length: n }, (_, k) =>
    rec(at('2024-05-15', '10:00') + k, '10.0.0.1', 'alice', `host${k}.example`)
  )
}

/** One closed file of ROWS rows (`host<i>.example`, user alice), its record `i` (line i + 2) replaced by `damaged(line)`. */
async function damagedFile(env: StatsTestEnv, i: number, damaged: (line: string) => string): Promise<string> {
  await writeFiles(env, rows(ROWS))
  const [name] = readdirSync(env.config.stats.dir)
  const path = join(env.config.stats.dir, name!)
  const lines = readFileSync(path, 'latin1').split('\r\n')
  lines[i + 1] = damaged(lines[i + 1]!)
  writeFileSync(path, lines.join('\r\n'), 'latin1')
  return name!
}

const CASES: Array<[string, (line: string) => string, string]> = [
  ['an unterminated quote', (l) => l.replace('host50.example', '"host50.example'), 'an unterminated quote'],
  ['a row without a time', (l) => l.replace(/^\d+/, ''), 'no time (created)'],
  ['a time that is not a number', (l) => l.replace(/^\d{3}/, '12x'), 'a bad byte in field 1'],
  ['a NUL byte in the host', (l) => l.replace('host50', 'ho\0st50'), 'a NUL byte'],
  ['a row of two fields', (l) => l.split(',').slice(0, 2).join(','), '2 fields, fewer than 9']
]

for (const [what, damage, why] of CASES) {
  test(`a closed file with ${what} imports every other row and skips that one, counted and logged with its line`, async (t: TestContext) => {
    const env = statsTestEnv(t)
    const name = await damagedFile(env, 50, damage)
    const db = openDb(t, env)
    const { logger, lines } = captureLogs()
    const r = await importClosedFiles(db, env.config.stats.dir, 'UTC', { now: () => NOW, logger })
    t.assert.deepStrictEqual(r, { files: 1, rows: ROWS - 1, skipped: 1, pruned: 0 })
    t.assert.strictEqual(await rawCount(db), ROWS - 1)
    const hosts = (await topDomains(db, 'alice', DAY, DAY, 'all')).labels
    t.assert.strictEqual(hosts.length, ROWS - 1)
    t.assert.ok(
      hosts.every((h) => /^host\d+\.example$/.test(h)),
      'no damaged host stored'
    )
    t.assert.ok(!hosts.includes('host50.example'))
    const warned = lines.filter((l) => l.level === 40)
    t.assert.strictEqual(warned.length, 1, JSON.stringify(lines))
    t.assert.strictEqual(warned[0]!.file, name)
    t.assert.deepStrictEqual(warned[0]!.records, [`line 52: ${why}`])
    t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [], 'the file is done')
  })
}

test('a file of random bytes named like a statistics file is moved to quarantine/ with one error line, never imported nor deleted; the files beside it are imported', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, [rec(at('2024-05-15', '10:00'), '10.0.0.1', 'alice', 'a.example')])
  const junk = 'queries-20240515T100000000Z-4242-0.csv'
  const bytes = randomBytes(200 * 1024)
  writeFileSync(join(dir, junk), bytes)
  const db = openDb(t, env)
  const { logger, lines } = captureLogs()
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW, logger })
  t.assert.deepStrictEqual(r, { files: 1, rows: 1, skipped: 0, pruned: 0 })
  t.assert.deepStrictEqual(readdirSync(dir), ['quarantine'])
  t.assert.deepStrictEqual(readFileSync(join(dir, 'quarantine', junk)), bytes, 'kept as it was')
  const errors = lines.filter((l) => l.level === 50)
  t.assert.strictEqual(errors.length, 1, JSON.stringify(lines))
  t.assert.strictEqual(errors[0]!.file, junk)
  t.assert.match(String(errors[0]!.msg), /quarantined: its first line is not a statistics header/)
  t.assert.ok(!lines.some((l) => /truncated line/.test(String(l.msg))), 'no misleading "truncated line" warning')
  // The next runs (every stats.import-interval) leave it where it is and say nothing more.
  await importClosedFiles(db, dir, 'UTC', { now: () => NOW, logger })
  t.assert.strictEqual(lines.filter((l) => (l.level as number) >= 40 || l.file === junk).length, 1)
  t.assert.ok(existsSync(join(dir, 'quarantine', junk)))
})

test('a statistics file with more than 100 damaged records is quarantined, not imported', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, rows(300))
  const [name] = readdirSync(dir)
  const text = readFileSync(join(dir, name!), 'latin1')
    .split('\r\n')
    .map((l, i) => (i > 0 && i % 2 === 0 ? l.replace(/^\d+/, '') : l))
    .join('\r\n')
  writeFileSync(join(dir, name!), text, 'latin1')
  const db = openDb(t, env)
  const { logger, lines } = captureLogs()
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW, logger })
  t.assert.deepStrictEqual(r, { files: 0, rows: 0, skipped: 0, pruned: 0 })
  t.assert.strictEqual(await rawCount(db), 0)
  t.assert.deepStrictEqual(readdirSync(join(dir, 'quarantine')), [name])
  const errors = lines.filter((l) => l.level === 50)
  t.assert.strictEqual(errors.length, 1, JSON.stringify(lines))
  t.assert.match(String(errors[0]!.msg), /quarantined: too many damaged records/)
  t.assert.strictEqual((errors[0]!.records as string[])[0], 'line 3: no time (created)')
})

test('a .part file left by a DNS process that is gone is imported with one warning that names it and says what was lost', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  await writeFiles(env, rows(3))
  const [closed] = readdirSync(dir)
  const text = readFileSync(join(dir, closed!), 'latin1')
  rmSync(join(dir, closed!))
  // pid 2^22 + 1 is above Linux's pid_max: no such process. A kill -9 cut its last row.
  writeFileSync(join(dir, 'current-4194305-1715767200000.csv.part'), text + '1715767200003,0,10.0.0.1,ha', 'latin1')
  const db = openDb(t, env)
  const { logger, lines } = captureLogs()
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW, logger })
  t.assert.deepStrictEqual(r, { files: 1, rows: 3, skipped: 1, pruned: 0 })
  const gone = lines.filter((l) => /DNS process that is gone/.test(String(l.msg)))
  t.assert.strictEqual(gone.length, 1, JSON.stringify(lines))
  t.assert.strictEqual(gone[0]!.pid, 4194305)
  t.assert.match(String(gone[0]!.file), /^queries-\d{8}T\d{9}Z-4194305-r1715767200000\.csv$/)
})

test('a file larger than the check reads at once (1 MiB) is checked across its reads: every intact row is imported', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  const n = 30_000
  await writeFiles(env, rows(n))
  const [name] = readdirSync(dir)
  const lines = readFileSync(join(dir, name!), 'latin1').split('\r\n')
  lines[20_001] = lines[20_001]!.replace('host20000', '"host20000')
  writeFileSync(join(dir, name!), lines.join('\r\n'), 'latin1')
  t.assert.ok(readFileSync(join(dir, name!)).length > 1024 * 1024, 'more than one read')
  const db = openDb(t, env)
  const r = await importClosedFiles(db, dir, 'UTC', { now: () => NOW })
  t.assert.deepStrictEqual(r, { files: 1, rows: n - 1, skipped: 1, pruned: 0 })
  t.assert.strictEqual(await rawCount(db), n - 1)
})

test("the sync role's segments take a file as the importer does: a damaged record left out and logged, a file that is not ours quarantined", async (t: TestContext) => {
  const env = statsTestEnv(t)
  const dir = env.config.stats.dir
  const name = await damagedFile(env, 50, (l) => l.replace('host50', 'ho\0st50'))
  const junk = 'queries-20240515T100000000Z-4242-0.csv'
  writeFileSync(join(dir, junk), randomBytes(200 * 1024))
  const out = join(env.root, 'segments')
  const { logger, lines } = captureLogs()
  const logged = openSegmentWriter({ logger })
  t.after(() => logged.close())
  const facts = await logged.write(join(dir, name), join(out, `${name}.parquet`))
  t.assert.strictEqual(facts?.rows, ROWS - 1)
  t.assert.deepStrictEqual(
    lines.filter((l) => l.level === 40).map((l) => l.records),
    [['line 52: a NUL byte']]
  )
  t.assert.strictEqual(await logged.write(join(dir, junk), join(out, `${junk}.parquet`)), undefined)
  t.assert.ok(existsSync(join(dir, 'quarantine', junk)), 'quarantined, not left for the caller to delete')
  t.assert.ok(!existsSync(join(out, `${junk}.parquet`)))
})
