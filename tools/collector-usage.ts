/**
 * `filterd collector usage --config FILE [--key KEY] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]`:
 * usage per installation key per day (UTC) as the collector stored it (collector/usage-db.ts).
 * Prints one line per key and day: local-service reports and lookups (categorized, unknown) and
 * the filtering servers' user counts (last and maximum of the day); `--json` prints the records.
 */
import { existsSync } from 'node:fs'
import { open } from 'lmdb'
import { UsageDb, type UsageRecord } from '../collector/usage-db.js'
import { loadConfigFile } from '../engine/features.js'
import { commandArgs } from './cli/command-args.js'

const USAGE =
  'usage: filterd collector usage --config FILE [--key KEY] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]\n'

/** The table `filterd collector usage` prints. */
export function formatUsage(records: readonly UsageRecord[]): string {
  const rows = [['key', 'day', 'reports', 'lookups', 'unknown', 'forms', 'count', 'count-max']]
  for (const r of records) {
    rows.push([
      r.key,
      r.day,
      String(r.reports),
      String(r.lookups),
      String(r.unknown),
      String(r.forms),
      String(r.count),
      String(r.countMax)
    ])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  return (
    rows
      .map((row) =>
        row
          .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
          .join('  ')
          .trimEnd()
      )
      .join('\n') + '\n'
  )
}

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('collector usage', USAGE, argv, {
    key: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    json: { type: 'boolean' }
  })
  if (typeof args === 'number') return args
  const { values, config: file } = args
  const day = /^\d{4}-\d{2}-\d{2}$/
  const { from, to } = values
  for (const d of [from, to]) {
    if (d !== undefined && !day.test(d)) {
      process.stderr.write(`filterd collector usage: bad day "${d}"\n${USAGE}`)
      return 2
    }
  }
  const config = loadConfigFile(file)
  const path = config.collector.db
  if (!existsSync(path)) {
    process.stderr.write(`filterd collector usage: no collector database at ${path}\n`)
    return 1
  }
  const root = open({ path, maxDbs: 64 })
  try {
    const key = values.key
    const records = [
      ...new UsageDb(root).records({
        ...(key === undefined ? {} : { key }),
        ...(from === undefined ? {} : { from }),
        ...(to === undefined ? {} : { to })
      })
    ]
    process.stdout.write(values.json === true ? JSON.stringify(records, null, 2) + '\n' : formatUsage(records))
    return 0
  } finally {
    await root.close()
  }
}
