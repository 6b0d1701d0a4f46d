// A batch in the query log that a view lacks (what a ClickHouse killed between the query log and a view
// leaves; here the view is detached while the batch goes in): the sink, finding the batch in doubt, gives
// that view the batch and no other, and a second look changes nothing.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { ALL_USERS, CSV_HEADER, closedName, formatRow } from '../querylog/index.js'
import { ReportTime } from '../stats/index.js'
import { tempDir } from '../testing/temp.js'
import { openClickHouse, type ClickHouseStore } from './client.js'
import { migrateClickHouse } from './schema.js'
import { LEDGER_FILE, createClickHouseSink } from './sink.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'

const START = Date.parse('2024-05-15T10:00:00Z')
const ROWS = 3000

function writeFile(dir: string, name: string): void {
  let text = CSV_HEADER
  for (let i = 0; i < ROWS; i++) {
    const blocked = i % 4 === 0
    text += formatRow(
      START + i * 1000,
      false,
      '10.0.0.1',
      `n${i}.example`,
      blocked ? `n${i}.example` : '',
      blocked ? 'category' : 'none',
      [i % 5],
      blocked ? [i % 5] : [],
      `u${i % 3}`
    )
  }
  writeFileSync(join(dir, name), text)
}

/** What each aggregate counts for every user (`*all*`). */
async function counted(ch: ClickHouseStore): Promise<Record<string, number>> {
  const all = `'${ALL_USERS}'`
  const [r] = await ch.rows(
    `SELECT (SELECT sum(requests) FROM viewt.hours WHERE uid = ${all}) AS hours, ` +
      `(SELECT countMerge(requests) FROM viewt.names WHERE uid = ${all}) AS names, ` +
      `(SELECT sum(blocks) FROM viewt.blockcats WHERE uid = ${all}) AS blockcats, ` +
      `(SELECT count() FROM viewt.queries) AS queries`
  )
  return {
    hours: Number(r?.hours),
    names: Number(r?.names),
    blockcats: Number(r?.blockcats),
    queries: Number(r?.queries)
  }
}

test(
  'a batch found in doubt gives the views that lack it the batch, the others nothing',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'viewt' })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const dir = tempDir(t, 'filterd-views-')
    const quiet = (): void => {}
    const lines: string[] = []
    const options = {
      dir,
      host: 'dns-a',
      time: new ReportTime('Asia/Kolkata'),
      batchRows: 1000,
      spoolMaxBytes: 1 << 30,
      log: {
        info: quiet,
        warn: (_: unknown, m: string) => lines.push(m),
        error: (_: unknown, m: string) => lines.push(m)
      }
    }
    // One file whole, then another whose batches the names view does not see.
    writeFile(dir, closedName(START, 99, 'a'))
    assert.equal(await createClickHouseSink(ch, options).sendClosed(), ROWS)
    await ch.command('DETACH TABLE viewt.names_mv')
    const second = closedName(START + 1, 99, 'b')
    writeFile(dir, second)
    assert.equal(await createClickHouseSink(ch, options).sendClosed(), ROWS)
    await ch.command('ATTACH TABLE viewt.names_mv')
    assert.deepEqual(await counted(ch), { hours: 2 * ROWS, names: ROWS, blockcats: (2 * ROWS) / 4, queries: 2 * ROWS })

    // The sink killed before its ledger moved and the file removed: a new one finds every batch in doubt.
    writeFile(dir, second)
    writeFileSync(join(dir, LEDGER_FILE), '{}')
    const sink = createClickHouseSink(ch, options)
    assert.equal(await sink.sendClosed(), 0)
    assert.equal(sink.counts.batchesFound, 3)
    assert.equal(sink.counts.viewsCompleted, 3, 'the names table, once a batch')
    assert.deepEqual(await counted(ch), {
      hours: 2 * ROWS,
      names: 2 * ROWS,
      blockcats: (2 * ROWS) / 4,
      queries: 2 * ROWS
    })
    assert.ok(lines.every((l) => l.startsWith('statistics batch found in ClickHouse without some of its aggregates')))

    // Found again: every view counts it, nothing is added.
    writeFile(dir, second)
    writeFileSync(join(dir, LEDGER_FILE), '{}')
    const again = createClickHouseSink(ch, options)
    assert.equal(await again.sendClosed(), 0)
    assert.equal(again.counts.viewsCompleted, 0)
    assert.deepEqual(await counted(ch), {
      hours: 2 * ROWS,
      names: 2 * ROWS,
      blockcats: (2 * ROWS) / 4,
      queries: 2 * ROWS
    })
  }
)
