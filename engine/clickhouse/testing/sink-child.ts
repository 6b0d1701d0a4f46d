/**
 * The sink as a process of its own, for the tests that kill it (engine/clickhouse/sink-kill.test.ts):
 * `node sink-child.js <stats.dir> <url> <database> <batch-rows> <host> <timezone>` sends every closed
 * file, printing `found <batch>` for each in-doubt batch it finds already sent, then `done <rows>` and exits 0.
 */
import { openClickHouse } from '../client.js'
import { createClickHouseSink } from '../sink.js'
import { ReportTime } from '../../stats/index.js'

const [dir, url, database, batchRows, host, timeZone] = process.argv.slice(2)
if (dir === undefined || url === undefined || database === undefined || host === undefined) {
  process.stderr.write('usage: sink-child <dir> <url> <database> <batch-rows> <host> <timezone>\n')
  process.exit(2)
}
const store = openClickHouse({ url, user: 'default', password: '', database })
const quiet = (): void => {}
const sink = createClickHouseSink(store, {
  dir,
  host,
  time: new ReportTime(timeZone ?? 'UTC'),
  batchRows: Number(batchRows ?? 1000),
  spoolMaxBytes: 1 << 30,
  log: {
    info: (fields) => {
      if (typeof fields.batch === 'string') process.stdout.write(`found ${fields.batch}\n`)
    },
    warn: quiet,
    error: quiet
  }
})
const rows = await sink.sendClosed()
process.stdout.write(`done ${rows}\n`)
await store.close()
