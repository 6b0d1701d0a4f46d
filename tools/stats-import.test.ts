import { test, type TestContext } from 'node:test'
import { execFile, spawn } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { silentLogger } from '../engine/log/index.js'
import { ReportTime, activityByDay, activityByHour, openStatsDb, topDomains } from '../engine/stats/index.js'
import { ANONYMOUS_USER, createCsvQueryLog } from '../engine/querylog/index.js'
import { ledgerRows, rawCount, rec, statsTestEnv, writeFiles } from '../engine/testing/stats/fixtures.js'
import type { QueryLogRecord } from '../engine/querylog/index.js'
import { run } from './stats-import.js'
import { failpointEnv } from '../engine/failpoints.js'

const FILTERD = fileURLToPath(new URL('./filterd.js', import.meta.url))

interface Outcome {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
}

/** Runs `filterd stats-import` in a child; with `pause`, kills it with SIGKILL once it says it paused there. */
function importInChild(configFile: string, pause?: string, batchBytes = '1'): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // One file per transaction unless `batchBytes` says otherwise (the kill points count files).
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...failpointEnv({
        'stats.import.chunk-rows': '50',
        'stats.import.batch-bytes': batchBytes,
        'stats.import.pause': pause
      })
    }
    const child = spawn(process.execPath, [FILTERD, 'stats-import', '--config', configFile, '--no-wait'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s
      if (pause !== undefined && stdout.includes('PAUSED')) child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      resolve({ code, signal, stdout })
    })
  })
}

// The children import with the real clock, so the queries are recent (the last 20 minutes).
const BASE = Date.now() - 20 * 60_000

function queries(): QueryLogRecord[] {
  const out: QueryLogRecord[] = []
  for (let i = 0; i < 600; i++) {
    out.push(rec(BASE + i * 1000, `10.0.0.${i % 3}`, i % 3 === 0 ? null : 'alice', `n${i % 5}.example`))
  }
  return out
}

const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0)

test('a kill at any point of an import neither loses nor double-counts a row', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, queries(), 3) // 3 files of 200 rows, imported 50 rows per transaction
  // Each run is killed at a different place: inside a transaction before its commit, right after a
  // commit, at a file boundary, after the last commit of a file but before the file is deleted.
  const points = ['in-txn:50', 'after-commit:100', 'in-txn:150', 'after-commit:50', 'in-txn:100', 'after-commit:100']
  for (const point of points) {
    const r = await importInChild(env.configFile, point)
    t.assert.strictEqual(r.signal, 'SIGKILL', `paused and killed at ${point}: ${r.stdout}`)
  }
  const last = await importInChild(env.configFile)
  t.assert.strictEqual(last.code, 0, last.stdout)
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [])
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  const time = new ReportTime('UTC')
  const [from, to] = [time.dayOf(BASE), time.dayOf(BASE + 600_000)]
  t.assert.strictEqual(sum((await activityByDay(db, 'alice', from, to)).datasets[0]!.data), 400)
  t.assert.strictEqual(sum((await activityByDay(db, ANONYMOUS_USER, from, to)).datasets[0]!.data), 200)
  t.assert.strictEqual(sum((await activityByHour(db, time, 'alice', from, to)).datasets[0]!.data), 400)
  t.assert.strictEqual(sum((await topDomains(db, 'alice', from, to, 'all')).datasets[0]!.data), 400)
  t.assert.strictEqual(await rawCount(db), 600)
  t.assert.strictEqual(await ledgerRows(db), 600)
})

test('several files in one transaction: a kill before its commit imports none of them, the next import all of them once', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, queries(), 3)
  const killed = await importInChild(env.configFile, 'in-txn:1', String(1 << 20))
  t.assert.strictEqual(killed.signal, 'SIGKILL', killed.stdout)
  // Paused once, with the three files' rows in the one transaction.
  t.assert.match(killed.stdout, /PAUSED in-txn 600\n/)
  t.assert.strictEqual(readdirSync(env.config.stats.dir).filter((n) => n.endsWith('.csv')).length, 3)
  const db = openStatsDb(env.config.stats.db)
  t.assert.strictEqual(await rawCount(db), 0)
  t.assert.strictEqual(await ledgerRows(db), 0)
  await db.close()
  const last = await importInChild(env.configFile, undefined, String(1 << 20))
  t.assert.strictEqual(last.code, 0, last.stdout)
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [])
  const again = openStatsDb(env.config.stats.db)
  t.after(() => again.close())
  const time = new ReportTime('UTC')
  const [from, to] = [time.dayOf(BASE), time.dayOf(BASE + 600_000)]
  t.assert.strictEqual(sum((await activityByDay(again, 'alice', from, to)).datasets[0]!.data), 400)
  t.assert.strictEqual(await rawCount(again), 600)
  t.assert.strictEqual(await ledgerRows(again), 600)
  // One ledger row per file, each with its own rows.
  const perFile = await again.read(async (c) =>
    (await c.runAndReadAll('SELECT rows::DOUBLE FROM files ORDER BY name')).getRows().map((r) => Number(r[0]))
  )
  t.assert.deepStrictEqual(perFile, [200, 200, 200])
})

test('asks running writers to close their files first, so the last minutes are imported', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 10, controlPollMs: 10 })
  t.after(() => log.close())
  const now = Date.now()
  for (let i = 0; i < 5; i++) log.write(rec(now, '10.0.0.1', 'alice', 'recent.example'))
  await log.flush()
  const out: string[] = []
  const write = process.stdout.write
  process.stdout.write = (s: string) => {
    out.push(s)
    return true
  }
  let code: number
  try {
    code = await run(['--config', env.configFile, '--wait-ms', '5000'])
  } finally {
    process.stdout.write = write
  }
  t.assert.strictEqual(code, 0)
  t.assert.match(out.join(''), /imported 5 rows from 1 files/)
  const db = openStatsDb(env.config.stats.db)
  t.after(() => db.close())
  t.assert.strictEqual(await rawCount(db), 5)
})

test('answers usage errors with exit code 2', async (t: TestContext) => {
  const write = process.stderr.write
  process.stderr.write = () => true
  try {
    t.assert.strictEqual(await run([]), 2)
  } finally {
    process.stderr.write = write
  }
})

test('refuses, with one line and nothing imported, when Redis is configured (the sync role ships the files there)', async (t: TestContext) => {
  const env = statsTestEnv(t)
  await writeFiles(env, queries().slice(0, 10), 1)
  const before = readdirSync(env.config.stats.dir)
  const configFile = join(env.root, 'redis.yaml')
  // Nothing listens on port 9: the command must refuse without trying to connect.
  writeFileSync(configFile, `${env.yaml}common:\n  redis-ip: 127.0.0.1\n  redis-port: 9\n`)
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [FILTERD, 'stats-import', '--config', configFile, '--no-wait'],
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr })
      }
    )
  })
  t.assert.strictEqual(r.code, 1)
  t.assert.strictEqual(r.stdout, '')
  t.assert.match(r.stderr, /^filterd stats-import: refused: Redis is configured \(common\.redis-ip\)[^\n]*\n$/)
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), before, 'the files stay for the sync role to ship')
  t.assert.strictEqual(existsSync(env.config.stats.db), false, 'no statistics store was opened')
})
