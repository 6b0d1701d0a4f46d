/**
 * Writes FILES closed statistics files of ROWS rows each into DIR with the DNS server's own CSV
 * writer (so the names, header and quoting are the real ones), for a benchmark that feeds an
 * importer at full rate. Rows look like a subscriber population: USERS users (every 20th address
 * anonymous), a few thousand names, 10% blocked, 3% NXDOMAIN, times within the last hour.
 *
 *   node dist/bench/stats/csv-fill.js DIR FILES ROWS [USERS=10000]
 */
import { join } from 'node:path'
import { parseConfig } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import { createCsvQueryLog } from '../../engine/querylog/index.js'
import { syntheticRow } from './rows.js'

const [dir, filesArg, rowsArg, usersArg] = process.argv.slice(2)
if (dir === undefined || filesArg === undefined || rowsArg === undefined) {
  console.error('usage: csv-fill.js DIR FILES ROWS [USERS]')
  process.exit(2)
}
const FILES = Number(filesArg)
const ROWS = Number(rowsArg)
const USERS = Number(usersArg ?? 10_000)

const config = parseConfig(
  `stats:\n  dir: ${JSON.stringify(dir)}\n  db: ${JSON.stringify(join(dir, '.unused-db'))}\n  max-file-size: 1073741824\n`,
  join(dir, 'csv-fill.yaml')
)
const log = createCsvQueryLog(config, silentLogger(), {
  flushIntervalMs: 0,
  controlPollMs: 0,
  maxPendingBytes: 1 << 30
})
const start = Date.now() - 3_000_000
for (let f = 0; f < FILES; f++) {
  for (let r = 0; r < ROWS; r++) {
    const i = f * ROWS + r
    log.write(syntheticRow(i, USERS, start + (i % 2_900_000)))
    if ((r & 0xffff) === 0) await log.flush()
  }
  await log.rotateNow()
}
await log.close()
console.log(`csv-fill: ${FILES} files of ${ROWS} rows in ${dir}`)
