/**
 * A closed statistics file as the sink's batches: its records read by the statistics' own CSV code
 * (engine/stats/csv.ts), as query-log rows of the ClickHouse schema (engine/clickhouse/schema.ts).
 *
 * A batch holds at most `batchRows` rows of one UTC date and one local day, so that its insert is one
 * part of one partition of the query log and of each aggregate: all of it is written, or none of it
 * (ClickHouse writes a block of one partition as one part). Its identity is `<host>/<file>@<offset>`,
 * the byte offset of its first record in the text read: the same bytes make the same batch, under the
 * same identity, however often the sink is killed and started again.
 */
import { ANONYMOUS_USER, BLOCK_REASONS, decodeRow, parseRecords } from '../querylog/index.js'
import { formatDay, type ReportTime } from '../stats/index.js'
import { DAY_MS, HOUR_MS } from '../time/index.js'

export interface Batch {
  /** `<host>/<file>@<start>`. */
  id: string
  /** Byte offsets of its first record and after its last one. */
  start: number
  end: number
  /** The UTC date of its rows (`YYYY-MM-DD`): the query log's partition. */
  date: string
  rows: Array<Record<string, string | number>>
  /** Records between `start` and `end` that are not rows (the header, a record that does not decode). */
  skipped: number
}

/**
 * The batch of `text` (a file read as latin1, so that offsets are bytes) that starts at `start`, or
 * `undefined` when no complete record is left. `maxRecords` caps the records read (the rows the
 * batch may hold at most; an in-doubt batch is re-read with the count ClickHouse has of it).
 */
export function readBatch(
  text: string,
  start: number,
  maxRecords: number,
  id: (start: number) => string,
  time: ReportTime
): Batch | undefined {
  const rows: Batch['rows'] = []
  const one: string[][] = []
  let pos = start
  let skipped = 0
  let date = ''
  let day = -1
  let dateOf = NaN
  let dateText = ''
  const bid = id(start)
  while (rows.length < maxRecords) {
    one.length = 0
    const next = parseRecords(text, pos, 1, one)
    if (one.length === 0) break
    const row = decodeRow(one[0]!)
    if (row === undefined) {
      skipped++
      pos = next
      continue
    }
    // The date's text is made once per UTC day, not per row (it was a tenth of the sink's CPU).
    const utcDay = Math.floor(row.created / DAY_MS)
    if (utcDay !== dateOf) {
      dateOf = utcDay
      dateText = formatDay(utcDay)
    }
    const rowDate = dateText
    const rowDay = time.dayOf(row.created)
    if (rows.length === 0) {
      date = rowDate
      day = rowDay
    } else if (rowDate !== date || rowDay !== day) break
    rows.push({
      date: rowDate,
      created: row.created,
      hour: Math.floor(row.created / HOUR_MS),
      day: rowDay,
      user: row.user === '' ? ANONYMOUS_USER : row.user,
      nxdomain: row.nxdomain ? 1 : 0,
      address: row.address,
      host: row.host,
      blockedhost: row.blockedHost,
      reason: row.reason,
      cats: row.cats.join(' '),
      blockedcats: row.blockedCats.join(' '),
      client_id: row.clientId,
      source: row.source ?? '',
      blocked: BLOCK_REASONS.has(row.reason) ? 1 : 0,
      batch: bid,
      n: rows.length
    })
    pos = next
  }
  if (pos === start) return undefined
  return { id: bid, start, end: pos, date, rows, skipped }
}
