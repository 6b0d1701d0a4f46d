// stats.import-priority (engine/stats/priority.ts): the api role's statistics work (DuckDB's threads and
// libuv's pool, where every query runs) is moved to SCHED_IDLE or nice 19, so an import beside a DNS
// server never takes the CPU from it, while the main thread (the HTTP routes) keeps its priority.
// Checked on a real api daemon through /proc, which shows each thread's policy and nice.
import { test, type TestContext } from 'node:test'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { fetchJson, until } from '../engine/testing/wait.js'
import { tempDir } from '../engine/testing/temp.js'
import { threadScheduling } from '../engine/stats/priority.js'
import { getPriority } from 'node:os'

const SCHED_OTHER = 0
const SCHED_IDLE = 5
/** The daemon inherits this process's nice (a CI runner may start tests under nice). */
const NICE = getPriority()

async function apiWith(t: TestContext, priority: string | undefined): Promise<{ pid: number; url: string }> {
  const dir = tempDir(t, 'filterd-stats-priority-')
  const file = join(dir, 'api.yaml')
  const lines = [
    'datafiles:',
    `  cats: ${CONF}`,
    'common:',
    `  db: ${join(dir, 'db')}`,
    'stats:',
    `  dir: ${join(dir, 'csv')}`,
    `  db: ${join(dir, 'statsdb')}`,
    ...(priority === undefined ? [] : [`  import-priority: ${priority}`]),
    'api:',
    '  listen: 127.0.0.1:0',
    '  log: "-"',
    `  pid: ${join(dir, 'api.pid')}`
  ]
  writeFileSync(file, lines.join('\n'))
  const api = await startRole(t, 'api', file)
  return { pid: api.proc.pid!, url: api.url }
}

/** Each thread of `pid`: its id and scheduling. */
function threadsOf(pid: number): Array<{ tid: number; policy: number; nice: number }> {
  const out: Array<{ tid: number; policy: number; nice: number }> = []
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = threadScheduling(Number(t), () => readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'))
      out.push({ tid: Number(t), ...s })
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return out
}

/** Waits until every thread but the main one is scheduled as `want` says; returns the threads. */
async function settled(
  pid: number,
  want: (s: { policy: number; nice: number }) => boolean
): Promise<ReturnType<typeof threadsOf>> {
  await until(
    'every statistics thread moved',
    () => {
      const others = threadsOf(pid).filter((s) => s.tid !== pid)
      return others.length > 0 && others.every(want)
    },
    60_000,
    200
  )
  return threadsOf(pid)
}

test('import-priority: idle runs the statistics threads at SCHED_IDLE and leaves the main thread', async (t: TestContext) => {
  const { pid, url } = await apiWith(t, 'idle')
  const threads = await settled(pid, (s) => s.policy === SCHED_IDLE)
  const main = threads.find((s) => s.tid === pid)!
  t.assert.deepStrictEqual({ policy: main.policy, nice: main.nice }, { policy: SCHED_OTHER, nice: NICE })
  // Reports still answer (they run on the idle threads; the machine has spare time between imports).
  const day = new Date().toISOString().slice(0, 10)
  const r = await fetchJson(`${url}/stats/overview?from=${day}&to=${day}`)
  t.assert.strictEqual(r.status, 200)
})

test('by default (background) the statistics threads run at nice 19 and the main thread is unchanged', async (t: TestContext) => {
  const { pid } = await apiWith(t, undefined)
  const threads = await settled(pid, (s) => s.nice === 19)
  const main = threads.find((s) => s.tid === pid)!
  t.assert.deepStrictEqual({ policy: main.policy, nice: main.nice }, { policy: SCHED_OTHER, nice: NICE })
  t.assert.ok(threads.every((s) => s.policy === SCHED_OTHER))
})

test('import-priority: normal leaves every thread as it was', async (t: TestContext) => {
  const { pid, url } = await apiWith(t, 'normal')
  // After a few imports (every 2 s) the threads exist; none was moved.
  await until('an import ran', async () => (await fetchJson(`${url}/health`)).status === 200, 30_000, 200)
  await new Promise((r) => setTimeout(r, 3000))
  t.assert.ok(threadsOf(pid).every((s) => s.policy === SCHED_OTHER && s.nice === NICE))
})
