/**
 * A closed statistics file as the sink's batches: its records read by the query log's own CSV parser
 * (engine/querylog/csv.ts), as query-log rows of the ClickHouse schema (engine/clickhouse/schema.ts) in
 * ClickHouse's `TabSeparated` format, ready to send.
 *
 * A batch holds at most `batchRows` rows of one UTC date and one local day, so that its insert is one
 * part of one partition of the query log and of each aggregate: all of it is written, or none of it
 * (ClickHouse writes a block of one partition as one part). Its identity is `<host>/<file>@<offset>`,
 * the byte offset of its first record in the text read: the same bytes make the same batch, under the
 * same identity, however often the sink is killed and started again.
 *
 * Why TabSeparated made here, not objects encoded as JSON: a row built as objects, then as JSON, took
 * most of the sink's CPU, and ClickHouse parses JSON at about the cost the sink made it
 * (bench/results/2026-12-06-clickhouse.md). The file is read as latin1 (a string whose characters are its
 * bytes), so a text field goes from the CSV to the batch as the bytes it is, escaped
 * (engine/clickhouse/sql.ts's `tsvField`, whose escapes are ASCII and so cannot meet a byte of a UTF-8
 * sequence), and the batch is checked to be UTF-8 once, whole: a file that holds a byte sequence that is
 * not (a damaged file) has its batch made again field by field, decoded as UTF-8 as the DuckDB importer
 * decodes it (U+FFFD for what is not text).
 */
import { isUtf8 } from 'node:buffer'
import { ANONYMOUS_USER, BLOCK_REASONS, decodeRow, parseRecords } from '../querylog/index.js'
import { formatDay, type ReportTime } from '../stats/index.js'
import { DAY_MS, HOUR_MS } from '../time/index.js'
import { QUERY_COLUMNS } from './schema.js'
import { tsvField } from './sql.js'

/** The columns of a batch's rows, in their order (all of the query log's). */
export const BATCH_COLUMNS: readonly string[] = QUERY_COLUMNS.map(([name]) => name)

export interface Batch {
  /** `<host>/<file>@<start>`. */
  id: string
  /** Byte offsets of its first record and after its last one. */
  start: number
  end: number
  /** The UTC date of its rows (`YYYY-MM-DD`): the query log's partition. */
  date: string
  /** The rows it holds. */
  rows: number
  /** Its rows as `TabSeparated` (BATCH_COLUMNS), UTF-8. */
  tsv: Buffer
  /** Records between `start` and `end` that are not rows (the header, a record that does not decode). */
  skipped: number
}

/** Latin1 bytes → the same bytes when they are UTF-8, else the UTF-8 of their decoding. */
const asUtf8 = (bytes: string): string =>
  Buffer.from(Buffer.from(bytes, 'latin1').toString('utf8'), 'utf8').toString('latin1')

const CANONICAL_CATS = /^(?:(?:0|[1-9]\d{0,8})(?: (?!$)|$))*$/

/** A categories field as the row's: integers joined by one space (the writer's own form, kept as it is). */
function catsOf(raw: string | undefined): string {
  if (raw === undefined || raw === '') return ''
  if (CANONICAL_CATS.test(raw)) return raw
  return decodeRow(['0', '', '', '', '', '', raw, ''])!.cats.join(' ')
}

/**
 * The batch of `text` (a file read as latin1, so that offsets are bytes) that starts at `start`, or
 * `undefined` when no complete record is left. `maxRecords` caps the rows the batch holds (an in-doubt
 * batch is re-read with the count ClickHouse has of it); the batch also ends before a record that
 * starts at `stopAt` or after (the start of a batch ClickHouse already has: engine/clickhouse/sink.ts).
 */
export function readBatch(
  text: string,
  start: number,
  maxRecords: number,
  id: (start: number) => string,
  time: ReportTime,
  stopAt = Infinity
): Batch | undefined {
  const made = makeBatch(text, start, maxRecords, id(start), time, stopAt, false)
  if (made === undefined || isUtf8(made.tsv)) return made
  return makeBatch(text, start, maxRecords, id(start), time, stopAt, true)
}

function makeBatch(
  text: string,
  start: number,
  maxRecords: number,
  bid: string,
  time: ReportTime,
  stopAt: number,
  decode: boolean
): Batch | undefined {
  const field = decode ? (raw: string): string => tsvField(asUtf8(raw)) : tsvField
  // The identity as UTF-8 bytes (a host name may be any text), like every field.
  const batchField = tsvField(Buffer.from(bid, 'utf8').toString('latin1'))
  const anonymous = tsvField(ANONYMOUS_USER)
  const one: string[][] = []
  let out = ''
  let rows = 0
  let pos = start
  let skipped = 0
  let date = ''
  let day = -1
  let utcDayOf = NaN
  let dateText = ''
  let hourOf = NaN
  let hourText = ''
  while (rows < maxRecords && pos < stopAt) {
    one.length = 0
    const next = parseRecords(text, pos, 1, one)
    if (one.length === 0) break
    const f = one[0]!
    // What engine/querylog's decodeRow takes as a row: eight fields or more, a number first.
    const created = Number(f[0])
    if (f.length < 8 || f[0] === '' || !Number.isFinite(created)) {
      skipped++
      pos = next
      continue
    }
    // The date's text is made once per UTC day and the hour's once per hour, not per row.
    const utcDay = Math.floor(created / DAY_MS)
    if (utcDay !== utcDayOf) {
      utcDayOf = utcDay
      dateText = formatDay(utcDay)
    }
    const rowDay = time.dayOf(created)
    if (rows === 0) {
      date = dateText
      day = rowDay
    } else if (dateText !== date || rowDay !== day) break
    const hour = Math.floor(created / HOUR_MS)
    if (hour !== hourOf) {
      hourOf = hour
      hourText = String(hour)
    }
    const user = f[8] ?? ''
    const reason = f[5]!
    out +=
      dateText +
      '\t' +
      String(created) +
      '\t' +
      hourText +
      '\t' +
      String(rowDay) +
      '\t' +
      (user === '' ? anonymous : field(user)) +
      (f[1] === '1' ? '\t1\t' : '\t0\t') +
      field(f[2]!) +
      '\t' +
      field(f[3]!) +
      '\t' +
      field(f[4]!) +
      '\t' +
      field(reason) +
      '\t' +
      catsOf(f[6]) +
      '\t' +
      catsOf(f[7]) +
      '\t' +
      field(f[9] ?? '') +
      '\t' +
      field(f[10] ?? '') +
      (BLOCK_REASONS.has(reason) ? '\t1\t' : '\t0\t') +
      batchField +
      '\t' +
      String(rows) +
      '\n'
    rows++
    pos = next
  }
  if (pos === start) return undefined
  return { id: bid, start, end: pos, date, rows, tsv: Buffer.from(out, 'latin1'), skipped }
}
