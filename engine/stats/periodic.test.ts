import { test, type TestContext } from 'node:test'
import { until } from '../testing/wait.js'
import { startPeriodicJob } from './periodic.js'

test('wake-ups during a run fold into one run after it; runNow gives its result and its error', async (t: TestContext) => {
  let runs = 0
  let release: () => void = () => {}
  let fail = false
  const done: number[] = []
  const failed: string[] = []
  const job = startPeriodicJob(
    async () => {
      runs++
      await new Promise<void>((r) => (release = r))
      if (fail) throw new Error('boom')
      return runs
    },
    3_600_000,
    { done: (n) => done.push(n), failed: (err) => failed.push((err as Error).message) }
  )
  t.after(() => {
    release()
    return job.close()
  })
  // The first run starts at once (setImmediate), and waits for release.
  await until('the first run', () => runs === 1)
  for (let i = 0; i < 10; i++) job.wake()
  release()
  await until('one more run for the ten wake-ups', () => runs === 2)
  release()
  await until('both reported', () => done.length === 2)
  t.assert.deepStrictEqual(done, [1, 2])
  await new Promise((r) => setTimeout(r, 50))
  t.assert.strictEqual(runs, 2)
  fail = true
  const p = job.runNow()
  await until('the asked run', () => runs === 3)
  release()
  await t.assert.rejects(p, /boom/)
  t.assert.deepStrictEqual(failed, [])
})
