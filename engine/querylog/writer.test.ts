import { test, type TestContext } from 'node:test'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { silentLogger } from '../log/index.js'
import { decodeRow, formatRow, parseRecords } from './csv.js'
import { statsTestEnv, rec, blocked } from '../testing/stats/fixtures.js'
import { createCsvQueryLog, type CsvFileIo } from './writer.js'
import type { QueryLogSink } from './index.js'

function rowsOf(path: string): ReturnType<typeof decodeRow>[] {
  const out: string[][] = []
  parseRecords(readFileSync(path).toString('latin1'), 0, Infinity, out)
  return out.slice(1).map((f) => decodeRow(f))
}

const T0 = Date.UTC(2024, 4, 15, 12, 0, 0)

test('writes one CSV row per record and closes the file under a queries-*.csv name on rotateNow', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0, now: () => T0 })
  t.after(() => log.close())
  t.assert.strictEqual(log.enabled, true)
  log.write({ ...rec(T0, '10.0.0.1', 'alice', 'a.example'), clientId: 'kid-phone' })
  log.write(blocked(T0 + 1, '10.0.0.2', null, 'bad,name.example', [7, 9]))
  await log.flush()
  t.assert.match(readdirSync(env.config.stats.dir).join(), /^current-\d+-\d+\.csv\.part$/)
  const path = await log.rotateNow()
  t.assert.ok(path !== undefined)
  t.assert.match(path, /queries-20240515T120000000Z-\d+-0\.csv$/)
  t.assert.deepStrictEqual(readdirSync(env.config.stats.dir), [path.split('/').pop()])
  const rows = rowsOf(path)
  t.assert.deepStrictEqual(rows, [
    {
      created: T0,
      nxdomain: false,
      address: '10.0.0.1',
      host: 'a.example',
      blockedHost: '',
      reason: 'none',
      cats: [],
      blockedCats: [],
      user: 'alice',
      clientId: 'kid-phone'
    },
    {
      created: T0 + 1,
      nxdomain: false,
      address: '10.0.0.2',
      host: 'bad,name.example',
      blockedHost: 'bad,name.example',
      reason: 'category',
      cats: [7, 9],
      blockedCats: [7, 9],
      user: '',
      clientId: ''
    }
  ])
  t.assert.strictEqual(await log.rotateNow(), undefined, 'nothing to close: no empty file')
  t.assert.strictEqual(log.writtenRows, 2)
  t.assert.strictEqual(log.droppedRows, 0)
})

test('rotates the file every stats.rotate seconds', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const env = statsTestEnv(t, { rotate: 60 })
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  log.write(rec(T0, '10.0.0.1', 'alice', 'a.example'))
  t.mock.timers.tick(59_999)
  t.assert.strictEqual(await log.rotateNow().then(() => 'sync point'), 'sync point')
  // That rotateNow closed the first file; write again and let the timer do the next one.
  log.write(rec(T0, '10.0.0.1', 'alice', 'b.example'))
  t.mock.timers.tick(1)
  // The timer's rotation is queued before this call, so this one finds no file open.
  t.assert.strictEqual(await log.rotateNow(), undefined)
  const closed = readdirSync(env.config.stats.dir)
    .filter((n) => n.endsWith('.csv'))
    .sort()
  t.assert.strictEqual(closed.length, 2)
  t.assert.deepStrictEqual(
    rowsOf(join(env.config.stats.dir, closed[1]!)).map((r) => r?.host),
    ['b.example']
  )
})

test('rotates early when the file reaches stats.max-file-size', async (t: TestContext) => {
  const env = statsTestEnv(t, { 'max-file-size': 4096 })
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  for (let batch = 0; batch < 10; batch++) {
    for (let i = 0; i < 20; i++)
      log.write(rec(T0 + batch * 20 + i, '192.0.2.1', 'alice', `host-${batch}-${i}.example.com`))
    await log.flush()
  }
  await log.rotateNow()
  const dir = env.config.stats.dir
  const closed = readdirSync(dir)
    .filter((n) => n.endsWith('.csv'))
    .sort()
  t.assert.ok(closed.length >= 3, `${closed.length} files`)
  let total = 0
  for (const [i, n] of closed.entries()) {
    const size = readFileSync(join(dir, n)).length
    if (i < closed.length - 1) t.assert.ok(size >= 4096 && size < 4096 + 20 * 60, `file ${i} has ${size} bytes`)
    total += rowsOf(join(dir, n)).length
  }
  t.assert.strictEqual(total, 200)
})

test('drops and counts rows instead of queueing them when the disk stalls', async (t: TestContext) => {
  const env = statsTestEnv(t)
  let writes = 0
  const stalled: CsvFileIo = {
    open: async () => ({
      write: async (b: Buffer) => {
        if (writes++ > 0) await new Promise(() => {})
        return b.length
      },
      truncate: async () => {},
      close: async () => {}
    }),
    rename: async () => {},
    unlink: async () => {}
  }
  const log = createCsvQueryLog(env.config, silentLogger(), {
    flushIntervalMs: 0,
    controlPollMs: 0,
    io: stalled,
    maxPendingBytes: 2000
  })
  const line = rec(T0, '10.0.0.1', 'alice', 'a.example')
  for (let i = 0; i < 10; i++) log.write(line)
  void log.flush() // takes the 10 rows in flight, and never finishes
  await new Promise((resolve) => setImmediate(resolve))
  for (let i = 0; i < 100; i++) log.write(line)
  const size = formatRow(T0, false, '10.0.0.1', 'a.example', '', 'none', [], [], 'alice').length
  const room = Math.floor((2000 - 10 * size) / size) // what fits beside the 10 rows in flight
  t.assert.ok(room > 0 && room < 100)
  t.assert.strictEqual(log.droppedRows, 100 - room)
  t.assert.strictEqual(log.writtenRows, 0)
})

test('counts the rows of a write the disk refuses, and keeps writing afterwards', async (t: TestContext) => {
  const env = statsTestEnv(t)
  let fail = true
  const chunks: string[] = []
  const full: CsvFileIo = {
    open: async () => ({
      write: async (b: Buffer) => {
        if (fail && !b.toString().startsWith('created')) throw Object.assign(new Error('no space'), { code: 'ENOSPC' })
        chunks.push(b.toString())
        return b.length
      },
      truncate: async () => {},
      close: async () => {}
    }),
    rename: async () => {},
    unlink: async () => {}
  }
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0, io: full })
  t.after(() => log.close())
  for (let i = 0; i < 3; i++) log.write(rec(T0, '10.0.0.1', 'alice', 'a.example'))
  await log.flush()
  t.assert.strictEqual(log.droppedRows, 3)
  fail = false
  log.write(rec(T0, '10.0.0.1', 'alice', 'b.example'))
  await log.flush()
  t.assert.strictEqual(log.writtenRows, 1)
  t.assert.match(chunks.join(''), /b\.example/)
})

test('writes nothing when statistics are turned off', async (t: TestContext) => {
  const env = statsTestEnv(t, { enabled: false })
  const log = createCsvQueryLog(env.config, silentLogger())
  t.assert.strictEqual(log.enabled, false)
  log.write(rec(T0, '10.0.0.1', 'alice', 'a.example'))
  t.assert.strictEqual(await log.rotateNow(), undefined)
  t.assert.throws(() => readdirSync(env.config.stats.dir), { code: 'ENOENT' })
})

test('closes its current file when it sees a rotation request newer than the file', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const env = statsTestEnv(t)
  let now = T0
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 1000, now: () => now })
  t.after(() => log.close())
  log.write(rec(T0, '10.0.0.1', 'alice', 'a.example'))
  await log.flush()
  now = T0 + 5
  writeFileSync(join(env.config.stats.dir, 'rotate.request'), `${T0 + 5}\n`)
  t.mock.timers.tick(1000)
  // The check reads the file and renames it on the thread pool, which a loaded CI machine can hold
  // up for a while: poll the outcome on real time (only setInterval is mocked), bounded at 10 s.
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline && readdirSync(env.config.stats.dir).filter((n) => n.endsWith('.csv')).length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await log.flush()
  t.assert.strictEqual(readdirSync(env.config.stats.dir).filter((n) => n.endsWith('.csv')).length, 1)
})

test('is a QueryLogSink the DNS server accepts', (t: TestContext) => {
  const env = statsTestEnv(t, { enabled: false })
  const sink: QueryLogSink = createCsvQueryLog(env.config, silentLogger())
  t.assert.strictEqual(sink.enabled, false)
})

test('rows fill 64 KiB chunks in order, a row larger than a chunk gets one of its own, and non-ASCII text is UTF-8', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0, now: () => T0 })
  t.after(() => log.close())
  const hosts: string[] = []
  // 2,000 rows of about 60 bytes cross the first chunk's end; the huge one cannot fit in any chunk.
  for (let i = 0; i < 2000; i++) {
    const host = i === 1000 ? 'x'.repeat(70_000) + '.example' : i === 1001 ? `ünï-${i}.example` : `host-${i}.example`
    hosts.push(host)
    log.write(rec(T0 + i, '10.0.0.1', i % 2 === 0 ? 'alice' : 'böb', host))
  }
  const path = await log.rotateNow()
  const rows = rowsOf(path!)
  t.assert.deepStrictEqual(
    rows.map((r) => r?.host),
    hosts
  )
  t.assert.deepStrictEqual(
    rows.map((r) => r?.created),
    hosts.map((_, i) => T0 + i)
  )
  t.assert.strictEqual(rows[1]!.user, 'böb')
  t.assert.strictEqual(log.writtenRows, 2000)
})
