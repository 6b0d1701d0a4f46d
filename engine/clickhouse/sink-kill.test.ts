// The sink killed (SIGKILL) again and again while it sends a host's files, then run to the end: every
// row is in ClickHouse once, none twice, and the aggregates count each once. The kills land where
// they land; the test reports how many left a batch in doubt that the next start found already sent
// (the case the batch identity is for).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { CSV_HEADER, closedName, formatRow } from '../querylog/index.js'
import { tempDir } from '../testing/temp.js'
import { openClickHouse } from './client.js'
import { LEDGER_FILE } from './sink.js'
import { migrateClickHouse } from './schema.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'

const CHILD = fileURLToPath(new URL('./testing/sink-child.js', import.meta.url))
const FILES = 20
const ROWS_PER_FILE = 10_000
const START = Date.parse('2024-05-14T23:50:00Z') // the rows cross midnight UTC: batches split there

/** Closed files as the dns role writes them: `FILES` files of `ROWS_PER_FILE` rows, each row unique. */
function writeHostFiles(dir: string): number {
  let n = 0
  for (let f = 0; f < FILES; f++) {
    let text = CSV_HEADER
    for (let i = 0; i < ROWS_PER_FILE; i++, n++) {
      const user = n % 7 === 0 ? null : `u${n % 5}`
      const blocked = n % 3 === 0
      text += formatRow(
        START + n * 10,
        n % 11 === 0,
        `10.0.${n % 250}.1`,
        `h${n}.example`,
        blocked ? `h${n}.example` : '',
        blocked ? 'category' : 'none',
        [n % 9],
        blocked ? [n % 9] : [],
        user
      )
    }
    writeFileSync(join(dir, closedName(START + f, 4242, f.toString(36))), text)
  }
  return n
}

interface ChildRun {
  out: string
  code: number | null
}

function startChild(args: string[]): { done: Promise<ChildRun>; kill: () => void } {
  const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s))
  const done = once(child, 'exit').then(([code]) => ({ out, code: code as number | null }))
  return { done, kill: () => child.kill('SIGKILL') }
}

test(
  'a sink killed mid-send and started again puts every row in ClickHouse exactly once',
  { skip: skipWithoutClickHouse(), timeout: 600_000 },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const database = 'kills'
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database })
    t.after(() => ch.close())
    await migrateClickHouse(ch)
    const dir = join(tempDir(t, 'filterd-sinkkill-'), 'csv')
    mkdirSync(dir)
    const total = writeHostFiles(dir)
    const args = [dir, server.url, database, '1000', 'dns-a', 'Asia/Kolkata']
    let kills = 0
    let found = 0
    let progressed = true
    // Kill after a random moment while files are left; each start reads the ledger the last one left.
    for (let i = 0; i < 40 && progressed && readdirSync(dir).some((n) => n.endsWith('.csv')); i++) {
      const c = startChild(args)
      const timer = setTimeout(c.kill, 150 + Math.floor(Math.random() * 500))
      const run = await c.done
      clearTimeout(timer)
      found += run.out.split('\n').filter((l) => l.startsWith('found ')).length
      if (run.code === null) kills++
      else progressed = false // it finished before the kill
    }
    const last = await startChild(args).done
    found += last.out.split('\n').filter((l) => l.startsWith('found ')).length
    assert.equal(last.code, 0, last.out)
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.endsWith('.csv')),
      [],
      'every file was sent whole and deleted'
    )
    assert.ok(readdirSync(dir).includes(LEDGER_FILE))
    const [q] = await ch.rows(`SELECT count() AS c, uniqExact(host) AS u FROM ${database}.queries`)
    assert.equal(Number(q?.c), total, 'rows in ClickHouse')
    assert.equal(Number(q?.u), total, 'no row twice')
    const [h] = await ch.rows(`SELECT sum(requests) AS r FROM ${database}.hours WHERE uid = '*all*'`)
    assert.equal(Number(h?.r), total, 'the aggregates count each row once')
    const [a] = await ch.rows(`SELECT count() AS c FROM ${database}.queries WHERE user = '*anonymous*'`)
    assert.equal(Number(a?.c), Math.ceil(total / 7), 'anonymous rows under ANONYMOUS_USER')
    t.diagnostic(`${kills} kills; ${found} in-doubt batches found already sent after a restart`)
    assert.ok(kills > 0, 'at least one kill landed before the sink finished')
  }
)
