import { test, type TestContext } from 'node:test'
import { join } from 'node:path'
import { startRole } from '../engine/testing/daemon.js'
import { ask, makeConfig, world, writeConfigFile } from '../engine/testing/dns.js'
import { fillDisk, smallTmpfs } from '../engine/testing/tmpfs.js'
import { until } from '../engine/testing/wait.js'
import { metricsDir, readSnapshots } from '../engine/metrics/index.js'
import type { DnsSnapshot } from './metrics.js'

test("a full statistics disk does not freeze the DNS process's counters: queries and dropped rows keep moving", async (t: TestContext) => {
  const statsDir = smallTmpfs(t, '256k')
  if (statsDir === undefined) {
    t.skip('needs root to mount a small tmpfs')
    return
  }
  const w = await world(t)
  const options = { sections: { stats: { dir: statsDir, db: join(w.dir, 'statsdb') } } }
  fillDisk(statsDir)
  const dns = await startRole(t, 'dns', writeConfigFile(w, options))
  const dir = metricsDir(makeConfig(w, options))
  let snap: DnsSnapshot | undefined
  const published = async (queries: number): Promise<boolean> => {
    snap = (await readSnapshots<DnsSnapshot>(dir)).get('dns-0')
    return snap !== undefined && snap.queries === queries && snap.statsRowsDropped === queries
  }
  // Every row of the outage is dropped, and the counters say so while it lasts (snapshots every 5 s).
  for (let i = 0; i < 5; i++) await ask(dns.port, `a${i}.example`)
  await until('a snapshot with the first five queries dropped', () => published(5), 20_000)
  for (let i = 0; i < 5; i++) await ask(dns.port, `b${i}.example`)
  await until('a snapshot with ten queries dropped', () => published(10), 20_000)
  t.assert.strictEqual(snap?.statsRowsWritten, 0)
})
