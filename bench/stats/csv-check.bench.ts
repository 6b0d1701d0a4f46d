/**
 * The importer's record-by-record check of a closed statistics file (engine/stats/csv-check.ts),
 * against reading the same bytes alone (the baseline: what any check must pay): ROWS rows written by
 * the CSV writer as 60,000-row files (a 3 s file at 20,000 q/s), each checked RUNS times. The import
 * itself runs at about 500,000 rows/s on a quiet machine (docs/performance.md); the check should be a
 * small part of that (docs/statistics.md, "Damaged files").
 *
 *   node dist/bench/stats/csv-check.bench.js [rows=600000] [--runs=5]
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import { createCsvQueryLog } from '../../engine/querylog/index.js'
import { checkCsvFile } from '../../engine/stats/csv-check.js'
import { syntheticRow } from './rows.js'

const ROWS = Number(process.argv[2] ?? 600_000)
const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 5)
const FILE_ROWS = 60_000

const root = mkdtempSync(join(tmpdir(), 'filterd-csv-check-'))
try {
  const config = parseConfig(`stats:\n  dir: ${join(root, 'csv')}\n  db: ${join(root, 'db')}\n`, join(root, 'x.yaml'))
  const log = createCsvQueryLog(config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  const t0 = Date.UTC(2024, 4, 15, 10)
  for (let i = 0; i < ROWS; i++) {
    log.write(syntheticRow(i, 10_000, t0 + i))
    if ((i + 1) % FILE_ROWS === 0) await log.rotateNow()
  }
  await log.close()
  const files = readdirSync(config.stats.dir).map((f) => join(config.stats.dir, f))
  const bytes = files.reduce((sum, f) => sum + statSync(f).size, 0)
  console.log(
    `${ROWS} rows, ${(bytes / 1e6).toFixed(1)} MB in ${files.length} files; node ${process.version}, load ${loadavg()[0]!.toFixed(1)}`
  )
  for (let run = 0; run < RUNS; run++) {
    let t = performance.now()
    for (const f of files) readFileSync(f)
    const readMs = performance.now() - t
    t = performance.now()
    let good = 0
    for (const f of files) good += (await checkCsvFile(f, statSync(f).size, 100)).good
    const checkMs = performance.now() - t
    if (good !== ROWS) throw new Error(`checked ${good} rows of ${ROWS}`)
    console.log(
      `read alone ${readMs.toFixed(0)} ms; check ${checkMs.toFixed(0)} ms: ${(((ROWS / checkMs) * 1000) / 1e6).toFixed(2)} M rows/s, ${(bytes / 1e3 / checkMs).toFixed(0)} MB/s`
    )
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}
