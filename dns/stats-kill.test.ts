// kill -9 of the dns role during a flow of distinct names, with the api role importing. The DNS
// server's statistics writer keeps rows in memory until its next write (every second, or once 64 KiB
// are pending: docs/statistics.md, "The pipeline"), so a kill may lose the rows answered since the
// last write and nothing before: the file the killed process was writing is closed by the next writer
// or importer and imported, its cut last line skipped. No row may be counted twice.
import { test, type TestContext } from 'node:test'
import { startRole, type Child } from '../engine/testing/daemon.js'
import {
  QueryFlow,
  exited,
  flowWorld,
  lostAndDoubled,
  rawCountsByName,
  untilImported
} from '../engine/testing/stats-flow.js'
import { until } from '../engine/testing/wait.js'

const NAMES = Number(process.env.DNS_KILL_NAMES ?? 2000)
const KILLS = Number(process.env.DNS_KILLS ?? 2)
const RATE = 100 // names a second
/**
 * The writer's interval (1 s) plus 2 s for its timer or the write itself running late on a loaded
 * machine: a name answered earlier than this before a kill must be in the statistics.
 */
const FLUSH_BOUND_MS = 3000

test(`kill -9 of the dns role ${KILLS} times during a flow of ${NAMES} names: at most the last second's rows lost, none doubled`, async (t: TestContext) => {
  const w = await flowWorld(t)
  const api = await startRole(t, 'api', w.apiFile)
  let dns: Child = await startRole(t, 'dns', w.dnsFile)
  const flow = new QueryFlow(w.dnsPort, NAMES, RATE)
  const flowing = flow.run()
  const killedAt: number[] = []
  for (let k = 0; k < KILLS; k++) {
    await until('the flow to move on', () => flow.answered.size >= ((k + 1) * NAMES) / (KILLS + 1), 120_000, 20)
    killedAt.push(Date.now())
    dns.proc.kill('SIGKILL')
    await exited(dns)
    dns = await startRole(t, 'dns', w.dnsFile)
  }
  await flowing
  await dns.stop()
  await untilImported(w.statsDir, 90_000)
  await api.stop()
  const counts = await rawCountsByName(w.statsDb)
  const { lost } = lostAndDoubled(flow.answered.keys(), counts)
  const doubled = [...counts].filter(([, n]) => n > 1).map(([name]) => name)
  // A lost name is allowed only when a kill came within the bound after its answer.
  const unbounded = lost.filter((name) => {
    const answered = flow.answered.get(name)!
    return !killedAt.some((kill) => kill >= answered && kill - answered <= FLUSH_BOUND_MS)
  })
  // The oldest loss: how long before its kill the name was answered.
  const oldest = Math.max(
    0,
    ...lost.map((name) => {
      const answered = flow.answered.get(name)!
      return Math.min(...killedAt.filter((kill) => kill >= answered).map((kill) => kill - answered))
    })
  )
  t.diagnostic(
    `${KILLS} kills, ${flow.answered.size} names answered, ${flow.unanswered} unanswered (server down), ` +
      `${lost.length} lost within ${FLUSH_BOUND_MS} ms before a kill, ${unbounded.length} lost outside it (the oldest loss ${oldest} ms before its kill), ${doubled.length} doubled`
  )
  t.assert.ok(flow.answered.size >= NAMES / 2, `the flow was answered (${flow.answered.size} of ${NAMES})`)
  t.assert.deepStrictEqual(doubled.slice(0, 5), [], `${doubled.length} names counted twice`)
  t.assert.deepStrictEqual(
    unbounded.slice(0, 5),
    [],
    `${unbounded.length} names lost that were answered long before a kill`
  )
})
