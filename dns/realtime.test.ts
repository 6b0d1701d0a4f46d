/**
 * `proxy.realtime-priority`: the front process answers at SCHED_FIFO (read back from /proc), says so in
 * its log, and still answers; without the privilege it says why and answers at normal priority.
 */
import { test, type TestContext } from 'node:test'
import { readdirSync } from 'node:fs'
import { CATEGORY } from '../engine/categories/index.js'
import { addUser, ask, world, writeConfigFile } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'
import { SCHED_FIFO, schedulingOf } from '../engine/cpu-priority/realtime.js'

test('filterd dns with proxy.realtime-priority runs its threads at SCHED_FIFO and answers', async (t: TestContext) => {
  const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const file = writeConfigFile(w, { proxy: { 'realtime-priority': 3, 'log-level': 'info' } })
  const dns = await startRole(t, 'dns', file)
  const pid = dns.proc.pid!
  t.assert.strictEqual((await ask(dns.port, 'casino.example')).type, 'response')
  if (process.getuid?.() !== 0) {
    const warned = await dns.waitForLog((l) => String(l.msg).includes('cannot take real-time priority'))
    t.assert.strictEqual(warned.priority, 3)
    t.assert.strictEqual(schedulingOf(pid).policy, 0)
    return
  }
  await dns.waitForLog((l) => String(l.msg).includes('answering at real-time priority'))
  t.assert.deepStrictEqual(schedulingOf(pid), { policy: SCHED_FIFO, rtPriority: 3 }, 'the main thread')
  // Every thread: those started before the change (chrt --all-tasks) and after it (inherited).
  for (const task of readdirSync(`/proc/${pid}/task`))
    t.assert.strictEqual(schedulingOf(pid, Number(task)).policy, SCHED_FIFO, `thread ${task}`)
})

test('filterd dns without proxy.realtime-priority stays at normal priority', async (t: TestContext) => {
  const w = await world(t)
  const dns = await startRole(t, 'dns', writeConfigFile(w, { proxy: { 'log-level': 'info' } }))
  t.assert.strictEqual(schedulingOf(dns.proc.pid!).policy, 0)
  t.assert.ok(!dns.logs.some((l) => String(l.msg).includes('real-time priority')))
})
