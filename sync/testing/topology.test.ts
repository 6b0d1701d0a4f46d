/**
 * The test topology skips a subnet that a killed test process left behind: its veths keep their routes,
 * and a new topology on the same 10.<net> subnet would send its hosts' traffic into the old namespaces
 * (a sync /health that never answers). Needs root to make the leftover; skipped otherwise.
 */
import { execFileSync } from 'node:child_process'
import { test, type TestContext } from 'node:test'
import { createTopology } from './topology.js'

test('a topology skips a subnet that another interface still holds', (t: TestContext) => {
  if (process.getuid?.() !== 0) {
    t.skip('needs root for a veth')
    return
  }
  // The subnet this process would take first, held by a veth as a killed test's leftover would hold it.
  const first = 100 + (process.pid % 100)
  const leftover = `fdx${process.pid % 100000}`
  execFileSync('ip', ['link', 'add', leftover, 'type', 'veth', 'peer', 'name', `${leftover}p`])
  t.after(() => {
    execFileSync('ip', ['link', 'del', leftover]) // deletes its peer with it
  })
  execFileSync('ip', ['addr', 'add', `10.${first}.1.1/24`, 'dev', leftover])
  const topo = createTopology(1)
  t.after(() => {
    topo.cleanup()
  })
  t.assert.strictEqual(topo.kind, 'netns')
  t.assert.notStrictEqual(topo.hostAddress(1).split('.')[1], String(first), topo.hostAddress(1))
})
