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
 * Why TabSeparated made here from the file's bytes, not objects encoded as JSON: a row built as objects,
 * then as JSON, took most of the sink's CPU, most of it allocating and collecting strings, and ClickHouse
 * parses JSON at about the cost the sink made it (bench/results/2026-12-06-clickhouse.md). A record as
 * the writer writes nearly all of them (printable ASCII, no quote, no backslash, the categories as it
 * spells them, `created` as digits) needs no escape and no decoding: its fields' bytes are copied into
 * the batch, between the columns the sink computes, with no string made. Any other record (a quoted
 * field, a byte that is not ASCII, anything unusual) goes the general way: parsed by the query log's own
 * CSV parser (engine/querylog/csv.ts), its text fields decoded as UTF-8 as the DuckDB importer decodes
 * them (U+FFFD for what is not text) and escaped by engine/clickhouse/sql.ts's `tsvField`.
 */
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
  /** Its rows as `TabSeparated` (BATCH_COLUMNS), UTF-8 (a view of the bytes written). */
  tsv: Buffer
  /** Records between `start` and `end` that are not rows (the header, a record that does not decode). */
  skipped: number
}

/** Latin1 bytes → the same bytes when they are UTF-8, else the UTF-8 of their decoding. */
const asUtf8 = (bytes: string): string =>
  NON_ASCII.test(bytes) ? Buffer.from(Buffer.from(bytes, 'latin1').toString('utf8'), 'utf8').toString('latin1') : bytes
const NON_ASCII = /[\x80-\xff]/

/** The general way's field: decoded as UTF-8 (bytes kept when they are), escaped. */
const field = (raw: string): string => tsvField(asUtf8(raw))

const CANONICAL_CATS = /^(?:(?:0|[1-9]\d{0,8})(?: (?!$)|$))*$/

/** A categories field as the row's: integers joined by one space (the writer's own form, kept as it is). */
function catsOf(raw: string | undefined): string {
  if (raw === undefined || raw === '') return ''
  if (CANONICAL_CATS.test(raw)) return raw
  return decodeRow(['0', '', '', '', '', '', raw, ''])!.cats.join(' ')
}

const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const COMMA = 0x2c
const SPACE = 0x20
const ZERO = 0x30
const NINE = 0x39
const ANONYMOUS = Buffer.from(tsvField(ANONYMOUS_USER), 'latin1')
const BLOCKING = [...BLOCK_REASONS].map((r) => Buffer.from(r, 'latin1'))
/** The most a row adds to its record's bytes on the fast way (the columns the sink computes, tabs). */
const ROW_EXTRA = 128
/** The fields the fast way reads (the CSV's columns; later ones are not read). */
const FIELDS = 11

/** A batch's text as it is written: grown as needed. */
class Out {
  buf: Buffer
  at = 0
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size)
  }
  room(n: number): void {
    if (this.at + n <= this.buf.length) return
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(next, 0, 0, this.at)
    this.buf = next
  }
  bytes(from: Uint8Array, start: number, end: number): void {
    const b = this.buf
    let at = this.at
    for (let i = start; i < end; i++) b[at++] = from[i]!
    this.at = at
  }
  all(from: Uint8Array): void {
    this.bytes(from, 0, from.length)
  }
  byte(c: number): void {
    this.buf[this.at++] = c
  }
  uint(n: number): void {
    if (n >= 10) this.uint(Math.floor(n / 10))
    this.buf[this.at++] = ZERO + (n % 10)
  }
}

/** Field `k`'s bounds in the record last split: [start, end) at 2k, 2k+1. */
const bounds = new Int32Array(2 * FIELDS)

/**
 * Splits the record at `pos` on the fast way: its field bounds into `bounds`; returns the offset after
 * its line break, the number of fields (negative: -1 not a fast record, -2 no complete record left).
 */
function split(bytes: Uint8Array, pos: number): { next: number; fields: number } {
  const len = bytes.length
  let fields = 0
  let start = pos
  for (let i = pos; i < len; i++) {
    const c = bytes[i]!
    if (c === COMMA || c === LF || c === CR) {
      if (fields < FIELDS) {
        bounds[2 * fields] = start
        bounds[2 * fields + 1] = i
      }
      fields++
      start = i + 1
      if (c === LF) return { next: i + 1, fields }
      if (c === CR) {
        if (bytes[i + 1] !== LF) return { next: pos, fields: -1 }
        return { next: i + 2, fields }
      }
    } else if (c < SPACE || c > 0x7e || c === 0x22 || c === 0x5c) return { next: pos, fields: -1 }
  }
  return { next: pos, fields: -2 }
}

/** Whether bytes [start, end) are 1-15 digits, not starting with 0 (as String(Number(x)) spells them). */
function isCanonicalUint(bytes: Uint8Array, start: number, end: number): boolean {
  if (end <= start || end - start > 15 || bytes[start] === ZERO) return false
  for (let i = start; i < end; i++) if (bytes[i]! < ZERO || bytes[i]! > NINE) return false
  return true
}

/** Whether bytes [start, end) are categories as the writer spells them (see CANONICAL_CATS). */
function isCanonicalCats(bytes: Uint8Array, start: number, end: number): boolean {
  let digits = 0
  for (let i = start; i < end; i++) {
    const c = bytes[i]!
    if (c === SPACE) {
      if (digits === 0 || i === end - 1) return false
      digits = 0
    } else if (c >= ZERO && c <= NINE) {
      if ((digits === 1 && bytes[i - 1] === ZERO) || ++digits > 9) return false
    } else return false
  }
  return true
}

function isBlocking(bytes: Uint8Array, start: number, end: number): boolean {
  for (const r of BLOCKING) {
    if (r.length !== end - start) continue
    let i = 0
    while (i < r.length && r[i] === bytes[start + i]) i++
    if (i === r.length) return true
  }
  return false
}

/** The latin1 view of a file's bytes, made once for the general way's records. */
const latin1Of = new WeakMap<Uint8Array, string>()

/** A row's time columns as text, each made once per UTC day, hour and local day (not per row). */
class TimeColumns {
  dateText = ''
  dateBytes = Buffer.alloc(0)
  hour = NaN
  hourBytes = Buffer.alloc(0)
  rowDay = NaN
  dayBytes = Buffer.alloc(0)
  private utcDay = NaN
  private readonly time: ReportTime

  constructor(time: ReportTime) {
    this.time = time
  }

  /** Moves to the row created at `created` (ms). */
  at(created: number): void {
    const utcDay = Math.floor(created / DAY_MS)
    if (utcDay !== this.utcDay) {
      this.utcDay = utcDay
      this.dateText = formatDay(utcDay)
      this.dateBytes = Buffer.from(this.dateText, 'latin1')
    }
    const hour = Math.floor(created / HOUR_MS)
    if (hour !== this.hour) {
      this.hour = hour
      this.hourBytes = Buffer.from(String(hour), 'latin1')
    }
    const rowDay = this.time.dayOf(created)
    if (rowDay !== this.rowDay) {
      this.rowDay = rowDay
      this.dayBytes = Buffer.from(String(rowDay), 'latin1')
    }
  }
}

/** A record of the writer's usual form (fields at `b`), copied byte for byte as its TabSeparated row. */
function writeFastRow(
  out: Out,
  bytes: Buffer,
  b: Int32Array,
  fields: number,
  t: TimeColumns,
  batchField: Buffer,
  row: number
): void {
  out.all(t.dateBytes)
  out.byte(TAB)
  out.bytes(bytes, b[0]!, b[1]!)
  out.byte(TAB)
  out.all(t.hourBytes)
  out.byte(TAB)
  out.all(t.dayBytes)
  out.byte(TAB)
  if (b[16] === b[17]) out.all(ANONYMOUS)
  else out.bytes(bytes, b[16]!, b[17]!)
  out.byte(TAB)
  out.byte(b[3]! - b[2]! === 1 && bytes[b[2]!] === 0x31 ? 0x31 : ZERO)
  for (let k = 2; k <= 7; k++) {
    out.byte(TAB)
    out.bytes(bytes, b[2 * k]!, b[2 * k + 1]!)
  }
  for (let k = 9; k <= 10; k++) {
    out.byte(TAB)
    if (k < fields) out.bytes(bytes, b[2 * k]!, b[2 * k + 1]!)
  }
  out.byte(TAB)
  out.byte(isBlocking(bytes, b[10]!, b[11]!) ? 0x31 : ZERO)
  out.byte(TAB)
  out.all(batchField)
  out.byte(TAB)
  out.uint(row)
  out.byte(LF)
}

/** Any other record's row (its fields parsed, `f`), each field decoded and escaped. */
function slowRow(f: readonly string[], created: number, t: TimeColumns, batchText: string, row: number): string {
  const user = f[8] ?? ''
  const reason = f[5]!
  return (
    t.dateText +
    '\t' +
    String(created) +
    '\t' +
    String(t.hour) +
    '\t' +
    String(t.rowDay) +
    '\t' +
    (user === '' ? tsvField(ANONYMOUS_USER) : field(user)) +
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
    (BLOCK_REASONS.has(asUtf8(reason)) ? '\t1\t' : '\t0\t') +
    batchText +
    '\t' +
    String(row) +
    '\n'
  )
}

/**
 * The batch of `bytes` (a file) that starts at `start`, or `undefined` when no complete record is left.
 * `maxRecords` caps the rows the batch holds (an in-doubt batch is re-read with the count ClickHouse has
 * of it); the batch also ends before a record that starts at `stopAt` or after (the start of a batch
 * ClickHouse already has: engine/clickhouse/sink.ts).
 */
export function readBatch(
  bytes: Buffer,
  start: number,
  maxRecords: number,
  id: (start: number) => string,
  time: ReportTime,
  stopAt = Infinity
): Batch | undefined {
  const bid = id(start)
  // The identity as UTF-8 bytes (a host name may be any text), like every field.
  const batchText = tsvField(Buffer.from(bid, 'utf8').toString('latin1'))
  const batchField = Buffer.from(batchText, 'latin1')
  // About the rows' bytes and the computed columns; grown when a row needs more, cut to size after.
  const out = new Out(Math.min(maxRecords * 160, (bytes.length - start) * 2 + 4096))
  const t = new TimeColumns(time)
  let rows = 0
  let pos = start
  let skipped = 0
  let date = ''
  let day = -1
  const one: string[][] = []
  while (rows < maxRecords && pos < stopAt) {
    const at = split(bytes, pos)
    const fields = at.fields
    let next = at.next
    if (fields === -2) break
    const b = bounds
    // The fast way: a record of the writer's usual form (see the module's comment).
    const fast =
      fields >= 9 &&
      isCanonicalUint(bytes, b[0]!, b[1]!) &&
      isCanonicalCats(bytes, b[12]!, b[13]!) &&
      isCanonicalCats(bytes, b[14]!, b[15]!)
    let created = 0
    let f: string[] = []
    if (fast) for (let i = b[0]!; i < b[1]!; i++) created = created * 10 + (bytes[i]! - ZERO)
    else {
      let text = latin1Of.get(bytes)
      if (text === undefined) latin1Of.set(bytes, (text = bytes.toString('latin1')))
      one.length = 0
      next = parseRecords(text, pos, 1, one)
      if (one.length === 0) break
      f = one[0]!
      // What engine/querylog's decodeRow takes as a row: eight fields or more, a number first.
      created = Number(f[0])
      if (f.length < 8 || f[0] === '' || !Number.isFinite(created)) {
        skipped++
        pos = next
        continue
      }
    }
    t.at(created)
    if (rows === 0) {
      date = t.dateText
      day = t.rowDay
    } else if (t.dateText !== date || t.rowDay !== day) break
    if (fast) {
      out.room(next - pos + ROW_EXTRA + batchField.length)
      writeFastRow(out, bytes, b, fields, t, batchField, rows)
    } else {
      const row = slowRow(f, created, t, batchText, rows)
      out.room(row.length)
      out.at += out.buf.write(row, out.at, 'latin1')
    }
    rows++
    pos = next
  }
  if (pos === start) return undefined
  // A batch cut short (a day's end, a small file) does not keep its room while it is in flight.
  const tsv = out.at < out.buf.length / 2 ? Buffer.from(out.buf.subarray(0, out.at)) : out.buf.subarray(0, out.at)
  return { id: bid, start, end: pos, date, rows, tsv, skipped }
}
