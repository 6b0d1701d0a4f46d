// The store's one transaction helper (engine/stats/transaction.ts) on a real DuckDB store, and the code a
// background run fails with when the store's close interrupts it (engine/stats/db.ts).
import { test, type TestContext } from 'node:test'
import type { DuckDBConnection } from '@duckdb/node-api'
import { tempDir } from '../testing/temp.js'
import { openStatsDb, type StatsDb } from './db.js'
import { readOnly, transaction } from './transaction.js'

function store(t: TestContext): StatsDb {
  const db = openStatsDb(tempDir(t, 'filterd-stats-txn-'))
  t.after(() => db.close())
  return db
}

const count = async (c: DuckDBConnection): Promise<number> =>
  Number((await c.runAndReadAll('SELECT count(*) FROM probe')).getRows()[0]![0])

test('a transaction commits what its function wrote and returns its value', async (t: TestContext) => {
  const db = store(t)
  await db.write((c) => c.run('CREATE TABLE probe (x INTEGER)'))
  const out = await db.write((c) =>
    transaction(c, async () => {
      await c.run('INSERT INTO probe VALUES (1), (2)')
      return 'done'
    })
  )
  t.assert.strictEqual(out, 'done')
  t.assert.strictEqual(await db.read(count), 2)
})

test('a transaction whose function fails writes nothing and throws that failure', async (t: TestContext) => {
  const db = store(t)
  await db.write((c) => c.run('CREATE TABLE probe (x INTEGER)'))
  const failure = new Error('half way')
  await t.assert.rejects(
    db.write((c) =>
      transaction(c, async () => {
        await c.run('INSERT INTO probe VALUES (1)')
        throw failure
      })
    ),
    (err) => err === failure
  )
  t.assert.strictEqual(await db.read(count), 0)
  // The connection is usable again: no transaction was left open on it.
  await db.write((c) => transaction(c, () => c.run('INSERT INTO probe VALUES (3)')))
  t.assert.strictEqual(await db.read(count), 1)
})

test('a read-only transaction leaves nothing behind, even what its function wrote', async (t: TestContext) => {
  const db = store(t)
  await db.write((c) => c.run('CREATE TABLE probe (x INTEGER)'))
  const seen = await db.write((c) =>
    readOnly(c, async () => {
      await c.run('INSERT INTO probe VALUES (1)')
      return await count(c)
    })
  )
  t.assert.strictEqual(seen, 1)
  t.assert.strictEqual(await db.read(count), 0)
})

test('background work that fails once the close interrupted it fails with ENGINE_STORE_OPEN; before, with its own error', async (t: TestContext) => {
  const db = store(t)
  await db.ready
  const failure = new Error('the work itself failed')
  await t.assert.rejects(
    db.background(async () => {
      throw failure
    }),
    (err) => err === failure
  )
  let started!: () => void
  let release!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  const gate = new Promise<void>((resolve) => (release = resolve))
  const work = db.background(async () => {
    started()
    await gate
    // What DuckDB throws on an interrupted connection: a message, no code.
    throw new Error('INTERRUPT Error: Interrupted!')
  })
  await running
  const closed = db.close() // interrupts the work, then waits for it
  release()
  await t.assert.rejects(work, (err: unknown) => (err as { code?: unknown }).code === 'ENGINE_STORE_OPEN')
  await closed
})
