// The live log's follower reads the DNS server's current files on the main thread (engine/querylog/follow.ts):
// with every thread of libuv's pool busy (as on a saturated host where the api role's pool runs at nice 19,
// stats.import-priority), it still hands over the rows.
import { test, type TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { open, rm, type FileHandle } from 'node:fs/promises'
import { openSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { silentLogger } from '../log/index.js'
import { tempDir } from '../testing/temp.js'
import { until } from '../testing/wait.js'
import { QueryLogFollower } from './follow.js'
import { createCsvQueryLog } from './writer.js'
import { rec, statsTestEnv } from '../testing/stats/fixtures.js'

/** libuv's pool size: UV_THREADPOOL_SIZE or its default of 4. */
const POOL = Number(process.env.UV_THREADPOOL_SIZE ?? 4)

/**
 * Occupies every thread of libuv's pool: an open of a FIFO with no writer blocks its thread. The returned
 * function releases them (a writer's open meets the waiting reader at once) and closes both ends.
 */
function blockThePool(t: TestContext): () => Promise<void> {
  const dir = tempDir(t, 'filterd-fifo-')
  const fifos = Array.from({ length: POOL }, (_, i) => join(dir, `f${i}`))
  for (const f of fifos) execFileSync('mkfifo', [f])
  const opens: Promise<FileHandle>[] = fifos.map((f) => open(f, 'r'))
  return async () => {
    const writers = fifos.map((f) => openSync(f, 'w'))
    for (const fh of await Promise.all(opens)) await fh.close()
    for (const fd of writers) closeSync(fd)
  }
}

test('the follower hands over rows while every thread of libuv pool is busy', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  log.write(rec(Date.now(), '10.0.0.1', 'alice', 'first.example'))
  await log.flush()
  const release = blockThePool(t)
  const follower = new QueryLogFollower(env.config.stats.dir, { pollMs: 50 })
  try {
    const subscribed = follower.subscribe({ rows: () => {}, skipped: () => {} })
    const timeout = new Promise<'stalled'>((resolve) => setTimeout(() => resolve('stalled'), 5000).unref())
    t.assert.notStrictEqual(await Promise.race([subscribed, timeout]), 'stalled', 'the first poll finished')
    t.assert.deepStrictEqual(
      follower.recent().map((r) => r.host),
      ['first.example']
    )
  } finally {
    await release()
    await follower.stop()
  }
})

test('a file opened and closed between two polls still reaches the follower, and every row comes once', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  // A file closed before the follower starts is the backlog's business, not a new row.
  log.write(rec(Date.now(), '10.0.0.1', 'alice', 'before.example'))
  await log.rotateNow()
  const follower = new QueryLogFollower(env.config.stats.dir, { pollMs: 3_600_000 })
  t.after(() => follower.stop())
  const got: string[] = []
  await follower.subscribe({ rows: (rows) => got.push(...rows.map((r) => r.host)), skipped: () => {} })
  t.assert.deepStrictEqual(got, [])

  // Opened at the first row after a quiet spell and rotated before the next poll: never seen as `.part`.
  log.write(rec(Date.now(), '10.0.0.2', 'kid', 'between.example'))
  await log.rotateNow()
  await follower.pollNow()
  t.assert.deepStrictEqual(got, ['between.example'])

  // A file the follower holds open is read through its descriptor when rotated, not again by its closed name.
  log.write(rec(Date.now(), '10.0.0.2', 'kid', 'followed.example'))
  await log.flush()
  await follower.pollNow()
  log.write(rec(Date.now(), '10.0.0.2', 'kid', 'last.example'))
  await log.rotateNow()
  await follower.pollNow()
  await follower.pollNow()
  t.assert.deepStrictEqual(got, ['between.example', 'followed.example', 'last.example'])
})

test('a new file is opened as it is created, so its rows arrive even if its closed name is deleted at once', async (t: TestContext) => {
  const env = statsTestEnv(t)
  const log = createCsvQueryLog(env.config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  t.after(() => log.close())
  // An hour between polls: only the folder watch can make this follower look.
  const follower = new QueryLogFollower(env.config.stats.dir, { pollMs: 3_600_000 })
  t.after(() => follower.stop())
  const got: string[] = []
  await follower.subscribe({ rows: (rows) => got.push(...rows.map((r) => r.host)), skipped: () => {} })

  log.write(rec(Date.now(), '10.0.0.2', 'kid', 'lone.example'))
  await log.flush()
  await until('the new file held open', () => follower.following.length === 1, 5000, 10)
  // The rotation, and the importer (woken by the same rename) deleting the file before the follower looks.
  const closed = await log.rotateNow()
  t.assert.ok(closed !== undefined)
  await rm(closed, { force: true })
  await until('the row read through the held descriptor', () => got.length === 1, 5000, 10)
  t.assert.deepStrictEqual(got, ['lone.example'])
  await until('the rotated file let go', () => follower.following.length === 0, 5000, 10)
})
