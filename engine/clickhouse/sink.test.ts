import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
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
