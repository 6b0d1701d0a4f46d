/**
 * threadPrioritizer's lift (engine/stats/priority.ts): this process's own libuv threads, moved to nice 19,
 * lifted to nice 0 and put back, read from /proc. Without the privilege to lower a nice value the lift
 * is refused, returned once, and the threads stay in the background.
 */
import { test, type TestContext } from 'node:test'
import { readFileSync, readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { getPriority } from 'node:os'
import { threadPrioritizer, threadScheduling } from './priority.js'

const read = (path: string): string => readFileSync(path, 'utf8')

/** The nice of every thread but the main one. */
function othersNice(): number[] {
  return readdirSync('/proc/self/task')
    .map(Number)
    .filter((tid) => tid !== process.pid)
    .map((tid) => threadScheduling(tid, read).nice)
}

test(
  'boost lifts the background threads to nice 0 and puts them back at 19',
  { skip: process.platform !== 'linux' },
  async (t: TestContext) => {
    await Promise.all([1, 2, 3, 4].map(() => readFile('/proc/self/stat'))) // libuv starts its pool
    const errors: Error[] = []
    const prioritize = threadPrioritizer('background', (err) => errors.push(err))
    prioritize()
    t.assert.ok(othersNice().length >= 4, 'the pool threads')
    t.assert.deepStrictEqual([...new Set(othersNice())], [19])
    const refused = prioritize.boost(true)
    if (process.getuid?.() === 0) {
      t.assert.strictEqual(refused, undefined)
      t.assert.deepStrictEqual([...new Set(othersNice())], [0], 'lifted')
    } else {
      t.assert.ok(refused !== undefined, 'an unprivileged process cannot lower a nice value')
      t.assert.deepStrictEqual([...new Set(othersNice())], [19], 'the refused lift is undone')
      t.assert.strictEqual(prioritize.boost(true), undefined, 'told once')
    }
    t.assert.strictEqual(prioritize.boost(false), undefined)
    t.assert.deepStrictEqual([...new Set(othersNice())], [19], 'back in the background')
    t.assert.strictEqual(threadScheduling(process.pid, read).nice, getPriority(), 'the main thread was never moved')
    t.assert.deepStrictEqual(errors, [])
  }
)

test('boost does nothing for normal and idle', (t: TestContext) => {
  t.assert.strictEqual(threadPrioritizer('normal').boost(true), undefined)
  t.assert.strictEqual(threadPrioritizer('idle').boost(true), undefined)
})
