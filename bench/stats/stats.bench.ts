/**
 * Statistics: rows imported per second (CSV file → LMDB aggregates and raw rows), and report latency
 * with three months of aggregates for USERS users (synthetic aggregates written directly).
 *
 *   node dist/bench/stats/stats.bench.js [users=10000] [domainsPerDay=20] [importRows=200000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bench } from 'tinybench'
import { parseConfig } from '../../engine/config/index.js'
import { silentLogger } from '../../engine/log/index.js'
import {
  activityByDay,
  activityByHour,
  createCsvQueryLog,
  detail,
  importClosedFiles,
  openStatsDb,
  rawLastHour,
  topDomains,
  ReportTime
} from '../../engine/stats/index.js'

const USERS = Number(process.argv[2] ?? 10_000)
const DOMAINS_PER_DAY = Number(process.argv[3] ?? 20)
const IMPORT_ROWS = Number(process.argv[4] ?? 200_000)
const DAY_MS = 86_400_000

const root = mkdtempSync(join(tmpdir(), 'filterd-stats-bench-'))
try {
  const config = parseConfig(
    `stats:\n  dir: ${JSON.stringify(join(root, 'csv'))}\n  db: ${JSON.stringify(join(root, 'db'))}\n  max-file-size: 1073741824\n`,
    join(root, 'x.yaml')
  )
  const now = Date.now()
  const time = new ReportTime('UTC')
  const today = time.dayOf(now)

  // 1. Import throughput: realistic rows (users × a few thousand names, 10% blocked, 3% NXDOMAIN).
  const log = createCsvQueryLog(config, silentLogger(), {
    flushIntervalMs: 0,
    controlPollMs: 0,
    maxPendingBytes: 1 << 30
  })
  const t0 = performance.now()
  for (let i = 0; i < IMPORT_ROWS; i++) {
    const u = i % USERS
    const blocked = i % 10 === 0
    log.write({
      time: now - 3_000_000 + i,
      qtype: 1,
      rcode: i % 33 === 0 ? 3 : 0,
      address: `10.${(u >> 8) & 255}.${u & 255}.${i % 3}`,
      user: u % 20 === 0 ? null : `user${u}`,
      name: `host${i % 5000}.example${i % 7}.com`,
      blockedName: blocked ? `example${i % 7}.com` : '',
      reason: blocked ? 'category' : 'none',
      cats: [i % 90],
      blockedCats: blocked ? [i % 90] : [],
      nxdomain: i % 33 === 0
    })
    if ((i & 0xffff) === 0) await log.flush()
  }
  await log.close()
  const writeMs = performance.now() - t0
  const db = openStatsDb(config.stats.db)
  const t1 = performance.now()
  const r = await importClosedFiles(db, config.stats.dir, 'UTC')
  const importMs = performance.now() - t1
  console.log(
    `csv write: ${IMPORT_ROWS} rows in ${writeMs.toFixed(0)} ms = ${Math.round((IMPORT_ROWS / writeMs) * 1000)} rows/s (format + async flush)`
  )
  console.log(
    `import:    ${r.rows} rows in ${importMs.toFixed(0)} ms = ${Math.round((r.rows / importMs) * 1000)} rows/s`
  )

  // 2. Three months of aggregates for USERS users: every hour, every day, DOMAINS_PER_DAY names a day.
  const days = 92
  const t2 = performance.now()
  for (let u = 0; u < USERS; u++) {
    const user = `user${u}`
    await db.root.transaction(() => {
      for (let d = today - days + 1; d <= today; d++) {
        void db.day.put([user, d], [2400, 240])
        for (let h = 0; h < 24; h++) void db.hour.put([user, d * 24 + h], [100, 10])
        for (let k = 0; k < DOMAINS_PER_DAY; k++)
          void db.domain.put([user, d, `site${(k * 7 + d) % 500}.example.com`], [100 - k, k % 3, k % 5, [k % 90]])
      }
    })
  }
  const fillMs = performance.now() - t2
  console.log(
    `aggregates: ${USERS} users × ${days} days (${USERS * days * (25 + DOMAINS_PER_DAY)} records) written in ${(fillMs / 1000).toFixed(1)} s`
  )

  const from = today - days + 2
  const user = `user${Math.floor(USERS / 2)}`
  const bench = new Bench({ time: 1000 })
  bench.add('activity/hour, 3 months', () => {
    activityByHour(db, time, user, from, today)
  })
  bench.add('activity/day, 3 months', () => {
    activityByDay(db, user, from, today)
  })
  bench.add('domains/all top 100, 3 months', () => {
    topDomains(db, user, from, today, 'all')
  })
  bench.add('domains/all top 100, 1 day', () => {
    topDomains(db, user, today, today, 'all')
  })
  bench.add('detail, 7 days', () => {
    detail(db, user, today - 6, today)
  })
  bench.add('detail, 3 months', () => {
    detail(db, user, from, today)
  })
  bench.add('raw, last hour (imported user)', () => {
    rawLastHour(db, time, 'user7', now)
  })
  bench.add('baseline: JSON.stringify of a 2,200-label chart', () => {
    JSON.stringify({
      labels: Array.from({ length: 2200 }, (_, i) => `2024-01-01 ${i}`),
      datasets: [{ label: 'Requests', data: new Array(2200).fill(1) }]
    })
  })
  await bench.run()
  console.table(bench.table())
  await db.close()
  void DAY_MS
} finally {
  rmSync(root, { recursive: true, force: true })
}
