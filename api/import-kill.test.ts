// kill -9 of the api role, the statistics importer, while a real DNS server answers a flow of
// distinct names: each kill lands right after a closed statistics file appears, when the importer
// (woken by the rename) is reading or committing it. Every answered name must be in the raw
// statistics exactly once at the end: an import is one DuckDB transaction with its ledger row, so a
// kill before the commit leaves the file for the next run and a kill after it finds the file recorded.
import { test, type TestContext } from 'node:test'
import { startRole, type Child } from '../engine/testing/daemon.js'
import {
  QueryFlow,
  exited,
  flowWorld,
  lostAndDoubled,
  pendingFiles,
  rawCountsByName,
  untilImported
} from '../engine/testing/stats-flow.js'
import { until } from '../engine/testing/wait.js'

const NAMES = Number(process.env.IMPORT_KILL_NAMES ?? 2000)
const KILLS = Number(process.env.IMPORT_KILLS ?? 3)
const RATE = 100 // names a second: 20 s of flow, a closed file every second

test(`kill -9 of the api role aimed at imports, ${KILLS} times during a flow of ${NAMES} names: none lost, none doubled`, async (t: TestContext) => {
  const w = await flowWorld(t, { rotate: 1 })
  const dns = await startRole(t, 'dns', w.dnsFile)
  let api: Child = await startRole(t, 'api', w.apiFile)
  const flow = new QueryFlow(w.dnsPort, NAMES, RATE)
  const flowing = flow.run()
  let flowDone = false
  void flowing.finally(() => {
    flowDone = true
  })
  let kills = 0
  let caught = 0 // kills that found their file not yet imported (deleted once its rows are committed)
  for (let k = 0; k < KILLS && !flowDone; k++) {
    // Spread over the flow, then aimed: at the first closed file seen from then on.
    await until('the flow to move on', () => flowDone || flow.sent >= ((k + 1) * NAMES) / (KILLS + 1), 120_000, 50)
    if (flowDone) break
    const before = new Set(pendingFiles(w.statsDir).closed)
    await until(
      'a new closed statistics file',
      () => flowDone || pendingFiles(w.statsDir).closed.some((n) => !before.has(n)),
      60_000,
      5
    )
    if (flowDone) break
    // The rename woke the importer: it is reading the file or writing its rows now.
    api.proc.kill('SIGKILL')
    await exited(api)
    if (pendingFiles(w.statsDir).closed.some((n) => !before.has(n))) caught++
    kills++
    api = await startRole(t, 'api', w.apiFile)
  }
  await flowing
  // A stopped DNS server has closed its last file; the importer takes it.
  await dns.stop()
  await untilImported(w.statsDir, 90_000)
  await api.stop()
  const counts = await rawCountsByName(w.statsDb)
  const { lost, doubled } = lostAndDoubled(flow.answered.keys(), counts)
  const doubledAny = [...counts].filter(([, n]) => n > 1).map(([name]) => name)
  t.diagnostic(
    `${kills} kills (${caught} with their file not yet imported), ${flow.answered.size} names answered, ${flow.unanswered} unanswered, ${counts.size} names in the store, ` +
      `${lost.length} lost, ${doubledAny.length} doubled`
  )
  t.assert.strictEqual(kills, KILLS, 'every kill landed during the flow')
  t.assert.ok(flow.answered.size >= NAMES * 0.9, `the flow was answered (${flow.answered.size} of ${NAMES})`)
  t.assert.deepStrictEqual(doubled.concat(doubledAny).slice(0, 5), [], `${doubledAny.length} names counted twice`)
  t.assert.deepStrictEqual(lost.slice(0, 5), [], `${lost.length} answered names lost`)
})
