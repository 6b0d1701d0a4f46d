import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { CSV_HEADER, closedName, formatRow } from '../querylog/index.js'
import { ReportTime } from '../stats/index.js'
import { releasedPort } from '../testing/ports.js'
import { tempDir } from '../testing/temp.js'
import { openClickHouse, type ClickHouseStore } from './client.js'
import { migrateClickHouse } from './schema.js'
import { LEDGER_FILE, createClickHouseSink, type SinkOptions } from './sink.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'

const START = Date.parse('2024-05-15T10:00:00Z')

function fileText(first: number, rows: number): string {
  let text = CSV_HEADER
  for (let i = first; i < first + rows; i++)
    text += formatRow(START + i * 1000, false, '10.0.0.1', `n${i}.example`, '', 'none', [], [], `u${i % 3}`)
  return text
}

/** `files` closed files of `rows` rows each; returns their names and texts. */
function writeFiles(dir: string, files: number, rows: number): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (let f = 0; f < files; f++) {
    const name = closedName(START + f, 99, f.toString(36))
    const text = fileText(f * rows, rows)
    writeFileSync(join(dir, name), text)
    out.push([name, text])
  }
  return out
}

function sinkOptions(dir: string, extra: Partial<SinkOptions> = {}): SinkOptions & { lines: string[] } {
  const lines: string[] = []
  const log = (f: Record<string, unknown>, m: string): void => {
    lines.push(`${m} ${JSON.stringify(f)}`)
  }
  return {
    dir,
    host: 'dns-a',
    time: new ReportTime('UTC'),
    batchRows: 1000,
    spoolMaxBytes: 1 << 30,
    log: { info: log, warn: log, error: log },
    lines,
    ...extra
  }
}

/** The ledger on disk, or undefined when there is none. */
function readLedgerText(dir: string): string | undefined {
  const path = join(dir, LEDGER_FILE)
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined
}

async function count(ch: ClickHouseStore): Promise<number> {
  const [r] = await ch.rows('SELECT count() AS c FROM sinkt.queries')
  return Number(r?.c)
}

test(
  'batches sent before a kill that left no ledger are found by their identity, not sent again',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'sinkt' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const dir = tempDir(t, 'filterd-sink-')
    const files = writeFiles(dir, 3, 2500)
    const sink = createClickHouseSink(ch, sinkOptions(dir))
    assert.equal(await sink.sendClosed(), 7500)
    assert.equal(sink.counts.batchesSent, 9) // 1000 + 1000 + 500 per file
    assert.equal(await count(ch), 7500)
    // What a kill after the inserts and before the ledger's write leaves: the files, no ledger.
    for (const [name, text] of files) writeFileSync(join(dir, name), text)
    rmSync(join(dir, LEDGER_FILE))
    const again = createClickHouseSink(ch, sinkOptions(dir, { batchRows: 700 }))
    assert.equal(await again.sendClosed(), 0)
    assert.equal(again.counts.batchesFound, 9, 'each batch found whole, though batch-rows changed')
    assert.equal(await count(ch), 7500)
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.endsWith('.csv')),
      []
    )
  }
)

test(
  'while ClickHouse does not answer the files wait in the spool, bounded, and go once it answers',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'sinkt' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    await server.kill()
    const dir = tempDir(t, 'filterd-spool-')
    const files = writeFiles(dir, 4, 1000)
    const size = Math.max(...files.map(([, text]) => Buffer.byteLength(text)))
    // Room for three files: the oldest of four is dropped, counted.
    const options = sinkOptions(dir, { spoolMaxBytes: 3 * size + 10 })
    const sink = createClickHouseSink(ch, options)
    await assert.rejects(sink.sendClosed(), { code: 'ENGINE_CLICKHOUSE_UNAVAILABLE' })
    assert.equal(sink.counts.droppedFiles, 1)
    assert.equal(sink.counts.droppedRows, 1000)
    assert.equal(sink.counts.spoolFiles, 3)
    assert.equal(sink.counts.sendErrors, 1)
    assert.ok(options.lines.some((l) => l.startsWith('ClickHouse spool full')))
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.endsWith('.csv')),
      files.slice(1).map(([n]) => n)
    )
    await server.start()
    assert.equal(await sink.sendClosed(), 3000)
    assert.equal(sink.counts.spoolFiles, 0)
    assert.equal(sink.counts.spoolBytes, 0)
    assert.equal(await count(ch), 3000)
  }
)

test('a sink pointed at no server fails with the catalogued code and keeps the files', async (t: TestContext) => {
  const ch = openClickHouse({
    url: `http://127.0.0.1:${await releasedPort()}`,
    user: 'default',
    password: '',
    database: 'x'
  })
  t.after(() => ch.close())
  const dir = join(tempDir(t, 'filterd-nosrv-'), 'csv')
  mkdirSync(dir)
  writeFiles(dir, 1, 10)
  await assert.rejects(createClickHouseSink(ch, sinkOptions(dir)).sendClosed(), {
    code: 'ENGINE_CLICKHOUSE_UNAVAILABLE'
  })
  assert.equal(readdirSync(dir).filter((n) => n.endsWith('.csv')).length, 1)
})

/** The store with its inserts passed through `wrap` (call number from 1, the real insert): faults injected around a real server. */
function wrapInserts(
  ch: ClickHouseStore,
  wrap: (call: number, insert: () => Promise<void>) => Promise<void>
): ClickHouseStore {
  let calls = 0
  return {
    ...ch,
    insertTabSeparated: (table, columns, body, settings) =>
      wrap(++calls, () => ch.insertTabSeparated(table, columns, body, settings))
  }
}

/** Resolves when `done()` says so, or fails the test after a generous deadline. */
function gate(what: string): { wait: Promise<void>; open(): void } {
  let open!: () => void
  const wait = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not seen within 60 s`)), 60_000)
    open = () => {
      clearTimeout(timer)
      resolve()
    }
  })
  return { wait, open }
}

test(
  'batches acknowledged out of order: the ledger moves only over the first ones, and an unknown outcome first loses and doubles nothing',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'sinkt' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const dir = tempDir(t, 'filterd-ooo-')
    const [[first]] = writeFiles(dir, 2, 2500) as [[string, string], [string, string]]
    const laterDone = gate('the second and third batches sent while the first is in flight')
    let ledgerSeen: string | undefined
    const store = wrapInserts(ch, async (call, insert) => {
      await insert()
      if (call === 3) laterDone.open()
      if (call !== 1) return
      // The first insert is in ClickHouse, its answer late: the two after it are acknowledged first.
      await laterDone.wait
      ledgerSeen = readLedgerText(dir)
      throw new Error('the answer to the first insert was lost (a timeout after the commit)')
    })
    const sink = createClickHouseSink(store, sinkOptions(dir, { inFlight: 3 }))
    await assert.rejects(sink.sendClosed(), /answer to the first insert was lost/)
    assert.equal(ledgerSeen, undefined, 'no ledger entry while the first batch is unacknowledged')
    assert.deepEqual(
      JSON.parse(readLedgerText(dir) ?? '{}'),
      {},
      'the batches after an unacknowledged one are not in the ledger'
    )
    assert.equal(sink.counts.sendErrors, 1)
    assert.equal(await count(ch), 2500, 'all three batches of the first file reached ClickHouse')
    // The next pass finds the three batches by their identity and sends the rest once.
    assert.equal(await sink.sendClosed(), 2500)
    assert.equal(sink.counts.batchesFound, 3)
    assert.equal(await count(ch), 5000)
    const [u] = await ch.rows('SELECT uniqExact(host) AS u FROM sinkt.queries')
    assert.equal(Number(u?.u), 5000, 'every row once')
    assert.ok(!readdirSync(dir).includes(first))
  }
)

test(
  'a batch failing mid-pipeline: those after it that ClickHouse took are found, it is sent again, cut before them whatever batch-rows',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'sinkt' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const dir = tempDir(t, 'filterd-midfail-')
    writeFiles(dir, 2, 2500)
    const thirdSent = gate('the third batch sent while the second is in flight')
    const store = wrapInserts(ch, async (call, insert) => {
      if (call === 3) thirdSent.open()
      if (call !== 2) return insert()
      // The second insert never reaches ClickHouse; it fails once the third is on its way.
      await thirdSent.wait
      throw new Error('connection reset before the second insert')
    })
    const sink = createClickHouseSink(store, sinkOptions(dir, { inFlight: 3 }))
    await assert.rejects(sink.sendClosed(), /connection reset before the second insert/)
    assert.equal(await count(ch), 1500, 'the first and third batches are in ClickHouse')
    assert.deepEqual(Object.values(JSON.parse(readLedgerText(dir) ?? '{}') as object).length, 1)
    // Another sink (a restart) with smaller batches: the second batch's rows are sent in pieces that stop
    // where the third batch starts, which is found.
    const again = createClickHouseSink(ch, sinkOptions(dir, { batchRows: 700 }))
    assert.equal(await again.sendClosed(), 1000 + 2500)
    assert.equal(again.counts.batchesFound, 1)
    assert.equal(await count(ch), 5000)
    const [u] = await ch.rows('SELECT uniqExact(host) AS u FROM sinkt.queries')
    assert.equal(Number(u?.u), 5000, 'every row once')
    const [v] = await ch.rows("SELECT sum(requests) AS r FROM sinkt.hours WHERE uid = '*all*'")
    assert.equal(Number(v?.r), 5000, 'every row counted once by the views')
  }
)

test(
  'names holding backslashes, quotes and bytes that are not UTF-8 reach ClickHouse as the DuckDB importer reads them',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'sinkt' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const dir = tempDir(t, 'filterd-hostile-')
    const hosts = ['back\\slash\\', '\\t\\n\\0\\N', 'quo"te\'d,comma', 'ünïcödé.例え', 'x'.repeat(60_000)]
    const rows = hosts.map((h, i) =>
      Buffer.from(formatRow(START + i, false, '10.0.0.1', h, '', 'none', [7, 12], [], `u\\${i}`, 'c\\id'))
    )
    // A record with a tab in a name: the intake leaves it out (the writer writes no control byte), so
    // it can never become a row of its own or a column too many.
    rows.push(Buffer.from(formatRow(START + 50, false, '10.0.0.1', 'tab\there', '', 'none', [], [], 'u')))
    // A damaged record: a name whose bytes are not UTF-8, and categories not as the writer spells them.
    rows.push(
      Buffer.concat([
        Buffer.from(`${START + 99},0,10.0.0.1,bad`),
        Buffer.from([0xff, 0xc3]),
        Buffer.from('.example,,none,007  5,,u,,\r\n')
      ])
    )
    writeFileSync(join(dir, closedName(START, 99, 'h')), Buffer.concat([Buffer.from(CSV_HEADER), ...rows]))
    assert.equal(await createClickHouseSink(ch, sinkOptions(dir)).sendClosed(), hosts.length + 1)
    const back = await ch.rows('SELECT host, user, cats, client_id FROM sinkt.queries ORDER BY n')
    assert.deepEqual(
      back.map((r) => [r.host, r.user, r.cats, r.client_id]),
      [...hosts.map((h, i) => [h, `u\\${i}`, '7 12', 'c\\id']), ['bad\ufffd\ufffd.example', 'u', '7 5', '']]
    )
  }
)
