/** raiseToRealtime moves a real process to SCHED_FIFO (read back from /proc), and rejects with chrt's reason. */
import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { SCHED_FIFO, raiseToRealtime, schedulingOf } from './realtime.js'

const ROOT = process.getuid?.() === 0

test('raiseToRealtime puts every thread of a process at SCHED_FIFO with the priority given', async (t: TestContext) => {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' })
  t.after(async () => {
    const gone = once(child, 'exit')
    child.kill()
    await gone
  })
  const pid = child.pid!
  t.assert.strictEqual(schedulingOf(pid).policy, 0, 'SCHED_OTHER before')
  if (!ROOT) {
    // Without CAP_SYS_NICE the kernel refuses, and the caller is told why.
    await t.assert.rejects(raiseToRealtime(7, pid), /permitted|privilege/i)
    return
  }
  await raiseToRealtime(7, pid)
  t.assert.deepStrictEqual(schedulingOf(pid), { policy: SCHED_FIFO, rtPriority: 7 })
})

test('raiseToRealtime rejects with the reason when the change is impossible', async (t: TestContext) => {
  const child = spawn('true', [], { stdio: 'ignore' })
  await once(child, 'exit') // its pid now names no process
  await t.assert.rejects(raiseToRealtime(5, child.pid), (err: Error) => {
    t.assert.match(err.message, /no such|failed|cannot/i)
    return true
  })
})
