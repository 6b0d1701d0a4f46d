/**
 * The import of whole closed CSV files through DuckDB's appender: the files are parsed here, byte by
 * byte, for the one CSV format the DNS server writes (engine/stats/csv.ts); the raw rows go into
 * their hour partition as whole DataChunks (engine/stats/chunk-writer.ts), and the hour and name
 * partials are summed in JavaScript maps during the same pass and appended too. DuckDB scans nothing:
 * no staging table, no `GROUP BY`. All of it runs in the caller's transaction (the appender writes
 * into the connection's open transaction, so a ROLLBACK drops its rows with the ledger rows).
 *
 * What it computes is what engine/stats/import-sql.ts computes from `read_csv` for a segment: the
 * same seq numbers (every record after a file's header takes the next number, in list and file
 * order, a skipped one included), the same local days (ReportTime's offset per quarter-hour), the
 * same partial rows (each row for its user and for ALL_USERS; a name's `cats` from its last row).
 * A record without a valid `created` (an integer) is skipped and counted; fewer fields than the
 * format's read as '' (a file written before a column existed); more are ignored (a newer writer's).
 */
import { readFile } from 'node:fs/promises'
import { BIGINT, BOOLEAN, INTEGER, VARCHAR, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api'
import { isUtf8 } from 'node:buffer'
import { ChunkWriter, type ColumnKind } from './chunk-writer.js'
import { ByteInterner, PairIndex } from './intern.js'
import { hoursTable, hoursTableSql, metaPutMany, namesTable, namesTableSql, rawTable, rawTableSql } from './db.js'
import { ALL_USERS, ANONYMOUS_USER, BLOCK_REASONS } from './files.js'
import type { SqlBatchOutcome, SqlImportOutcome, SqlImportWindow } from './import-sql.js'
import { HOUR_MS, type ReportTime } from './time.js'

const QUARTER_MS = 900_000
const DAY_MS = 86_400_000
const COMMA = 0x2c
const CR = 0x0d
const LF = 0x0a
const QUOTE = 0x22

// Fields used, by their position in the CSV (engine/stats/csv.ts: CSV_FIELDS); `created` is the first,
// address..blockedcats (2..7) are stored as they are.
const F_NX = 1
const F_ADDRESS = 2
const F_HOST = 3
const F_REASON = 5
const F_CATS = 6
const F_BLOCKEDCATS = 7
const F_USER = 8

const RAW_TYPES = [BIGINT, BIGINT, VARCHAR, BOOLEAN, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR]
const RAW_KINDS: ColumnKind[] = ['i64', 'i64', 'str', 'bool', 'str', 'str', 'str', 'str', 'str', 'str']
const HOURS_TYPES = [VARCHAR, INTEGER, BIGINT, BIGINT]
const HOURS_KINDS: ColumnKind[] = ['str', 'i32', 'i64', 'i64']
const NAMES_TYPES = [VARCHAR, VARCHAR, BIGINT, BIGINT, BIGINT, VARCHAR, BIGINT]
const NAMES_KINDS: ColumnKind[] = ['str', 'str', 'i64', 'i64', 'i64', 'str', 'i64']

/** One record's fields: bytes `start[i]..end[i]` of `srcs[src[i]]` (the file, or an unquoted copy). */
interface Fields {
  count: number
  readonly src: Int32Array
  readonly start: Int32Array
  readonly end: Int32Array
}

/**
 * One local day's partials, in arrays by index: per (user, UTC hour) requests and blocks; per (user,
 * host) requests, nxdomain, blocks and where its last row's `cats` are. Users and hosts are ids of
 * the import's ByteInterner; a PairIndex numbers the keys.
 */
class DayPartials {
  readonly hourAt = new PairIndex()
  readonly hUser: number[] = []
  readonly hHour: number[] = []
  readonly hRequests: number[] = []
  readonly hBlocks: number[] = []
  readonly nameAt = new PairIndex()
  readonly nUser: number[] = []
  readonly nHost: number[] = []
  readonly nRequests: number[] = []
  readonly nNx: number[] = []
  readonly nBlocks: number[] = []
  readonly nCatsSrc: number[] = []
  readonly nCatsStart: number[] = []
  readonly nCatsEnd: number[] = []

  addHour(user: number, hour: number, block: number): void {
    const i = this.hourAt.indexOf(user, hour)
    if (i < this.hUser.length) {
      this.hRequests[i] = this.hRequests[i]! + 1
      this.hBlocks[i] = this.hBlocks[i]! + block
      return
    }
    this.hUser.push(user)
    this.hHour.push(hour)
    this.hRequests.push(1)
    this.hBlocks.push(block)
  }

  addName(user: number, host: number, nx: number, block: number, f: Fields): void {
    const i = this.nameAt.indexOf(user, host)
    if (i === this.nUser.length) {
      this.nUser.push(user)
      this.nHost.push(host)
      this.nRequests.push(0)
      this.nNx.push(0)
      this.nBlocks.push(0)
      this.nCatsSrc.push(0)
      this.nCatsStart.push(0)
      this.nCatsEnd.push(0)
    }
    this.nRequests[i] = this.nRequests[i]! + 1
    this.nNx[i] = this.nNx[i]! + nx
    this.nBlocks[i] = this.nBlocks[i]! + block
    const has = F_CATS < f.count
    this.nCatsSrc[i] = has ? f.src[F_CATS]! : SRC_EMPTY
    this.nCatsStart[i] = has ? f.start[F_CATS]! : 0
    this.nCatsEnd[i] = has ? f.end[F_CATS]! : 0
  }
}

/** An open raw hour partition: its appender and the chunk being filled. */
interface RawSink {
  readonly appender: DuckDBAppender
  readonly chunk: ChunkWriter
}

// The import's first sources: the anonymous user's name, ALL_USERS, and no bytes.
const SRC_ANONYMOUS = 0
const SRC_ALL = 1
const SRC_EMPTY = 2

class Import {
  readonly days = new Map<number, DayPartials>()
  /** Every byte source of the import: fixed ones, then each file and each unquoted field. */
  readonly srcs: Buffer[] = [Buffer.from(ANONYMOUS_USER, 'latin1'), Buffer.from(ALL_USERS, 'latin1'), Buffer.alloc(0)]
  readonly strings = new ByteInterner(this.srcs)
  readonly anonymous = this.strings.intern(SRC_ANONYMOUS, 0, this.srcs[SRC_ANONYMOUS]!.length)
  readonly all = this.strings.intern(SRC_ALL, 0, this.srcs[SRC_ALL]!.length)
  readonly empty = this.strings.intern(SRC_EMPTY, 0, 0)
  /** By interned reason: 1 a block, 0 not, undefined not looked up yet. */
  private readonly blocks: Array<number | undefined> = []
  private lastDay = Number.NaN
  private lastPartials: DayPartials | undefined
  readonly raws = new Map<number, RawSink>()
  readonly files = new Map<string, SqlImportOutcome>()
  seq: number
  private lastQuarter = Number.NaN
  private lastOffset = 0
  private readonly utc: boolean

  constructor(
    readonly c: DuckDBConnection,
    readonly time: ReportTime,
    readonly w: SqlImportWindow
  ) {
    this.seq = w.seq
    this.utc = time.timeZone === 'UTC' || time.timeZone === 'Etc/UTC'
  }

  /** The local day of `created`: ReportTime's offset of its quarter-hour, as import-sql.ts joins it. */
  dayOf(created: number): number {
    const q = Math.floor(created / QUARTER_MS)
    if (q !== this.lastQuarter) {
      this.lastQuarter = q
      this.lastOffset = this.utc ? 0 : this.time.offsetAt(q * QUARTER_MS)
    }
    return Math.floor((created + this.lastOffset) / DAY_MS)
  }

  async rawSink(hour: number): Promise<RawSink> {
    let s = this.raws.get(hour)
    if (s === undefined) {
      const table = rawTable(hour)
      await this.c.run(rawTableSql(table))
      s = { appender: await this.c.createAppender(table), chunk: new ChunkWriter(RAW_TYPES, RAW_KINDS) }
      this.raws.set(hour, s)
    }
    return s
  }

  partialsOf(day: number): DayPartials {
    if (day === this.lastDay) return this.lastPartials!
    let d = this.days.get(day)
    if (d === undefined) this.days.set(day, (d = new DayPartials()))
    this.lastDay = day
    this.lastPartials = d
    return d
  }

  /** 1 when the interned reason is one of BLOCK_REASONS. */
  blockOf(reason: number): number {
    return (this.blocks[reason] ??= BLOCK_REASONS.has(this.strings.latin1(reason)) ? 1 : 0)
  }

  /** The interned field `k` of `f` ('' when the record has no such field). */
  field(f: Fields, k: number): number {
    return k < f.count ? this.strings.intern(f.src[k]!, f.start[k]!, f.end[k]!) : this.empty
  }

  /** The bytes of an interned string into a string column. */
  setString(ch: ChunkWriter, col: number, row: number, id: number): void {
    const s = this.strings
    ch.setBytes(col, row, this.srcs[s.src[id]!]!, s.start[id]!, s.end[id]!)
  }
}

/**
 * Loads `files` (complete records only: the caller hands over files that end in a line break) into
 * the raw and aggregate partitions, inside the caller's transaction. Returns each file's rows and the new seq.
 */
export async function appendCsvFiles(
  c: DuckDBConnection,
  time: ReportTime,
  files: readonly string[],
  w: SqlImportWindow
): Promise<SqlBatchOutcome> {
  const imp = new Import(c, time, w)
  try {
    for (const path of files) imp.files.set(path, await appendFile(imp, await readFile(path)))
    for (const { appender, chunk } of imp.raws.values()) {
      chunk.flush(appender)
      appender.closeSync()
    }
    imp.raws.clear()
    await appendSums(imp)
  } finally {
    for (const { appender } of imp.raws.values()) appender.closeSync() // an error: the caller rolls back
  }
  return { files: imp.files, seq: imp.seq }
}

/** One file's records, after its header line. */
async function appendFile(imp: Import, buf: Buffer): Promise<SqlImportOutcome> {
  const out: SqlImportOutcome = { rows: 0, skipped: 0 }
  const f: Fields = { count: 0, src: new Int32Array(16), start: new Int32Array(16), end: new Int32Array(16) }
  const src = imp.srcs.push(buf) - 1
  let pos = buf.indexOf(LF)
  pos = pos < 0 ? buf.length : pos + 1
  while (pos < buf.length) {
    const next = readRecord(buf, src, pos, f, imp.srcs)
    if (next <= pos) break // no complete record left (the caller cut the file after its last line break)
    const start = pos
    pos = next
    if (f.count === 1 && f.end[0] === f.start[0]) continue // an empty line
    const seq = ++imp.seq
    const created = f.count > 0 ? integerOf(imp.srcs[f.src[0]!]!, f.start[0]!, f.end[0]!) : undefined
    if (created === undefined || !validUtf8(buf, start, next)) {
      out.skipped++
      continue
    }
    out.rows++
    const hour = Math.floor(created / HOUR_MS)
    const sink = created < imp.w.keepRaw ? undefined : (imp.raws.get(hour) ?? (await imp.rawSink(hour)))
    addRow(imp, f, created, hour, seq, sink)
  }
  return out
}

/** Non-ASCII bytes must be UTF-8 (DuckDB's VARCHAR); the writer only writes UTF-8, a damaged file may not. */
function validUtf8(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return isUtf8(buf.subarray(start, end))
  return true
}

/** The decimal integer in `src[start..end)` (an optional minus sign), or undefined. */
function integerOf(src: Uint8Array, start: number, end: number): number | undefined {
  let i = start
  const neg = src[i] === 0x2d
  if (neg) i++
  if (i >= end) return undefined
  let n = 0
  for (; i < end; i++) {
    const d = src[i]! - 0x30
    if (d < 0 || d > 9) return undefined
    n = n * 10 + d
  }
  return Number.isSafeInteger(n) ? (neg ? -n : n) : undefined
}

/**
 * Reads the record at `pos` into `f` and returns the offset after its line break, or `pos` when no
 * complete record starts there. A field is quoted only when it holds a comma, a quote, CR or LF
 * (csv.ts): such a record is taken apart by `readQuoted`.
 */
function readRecord(buf: Buffer, src: number, pos: number, f: Fields, srcs: Buffer[]): number {
  const len = buf.length
  let i = pos
  f.count = 0
  for (;;) {
    if (i < len && buf[i] === QUOTE) return readQuoted(buf, pos, f, srcs)
    const s = i
    let c = 0
    while (i < len && (c = buf[i]!) !== COMMA && c !== LF && c !== CR) i++
    if (i >= len) return pos
    addField(f, src, s, i)
    if (c === COMMA) {
      i++
      continue
    }
    if (c === CR) {
      if (i + 1 < len && buf[i + 1] === LF) return i + 2
      if (i + 1 >= len) return pos
      i++ // a lone CR ends nothing
      continue
    }
    return i + 1
  }
}

function addField(f: Fields, src: number, start: number, end: number): void {
  const k = f.count++
  if (k >= f.start.length) return // more fields than the format has: ignored
  f.src[k] = src
  f.start[k] = start
  f.end[k] = end
}

/** A record with a quoted field: RFC 4180 unquoting, each field copied out of the file. */
function readQuoted(buf: Buffer, pos: number, f: Fields, srcs: Buffer[]): number {
  const len = buf.length
  let i = pos
  f.count = 0
  for (;;) {
    const parts: number[] = []
    if (i < len && buf[i] === QUOTE) {
      let j = i + 1
      for (;;) {
        const q = buf.indexOf(QUOTE, j)
        if (q < 0) return pos
        parts.push(j, q)
        if (buf[q + 1] === QUOTE) {
          parts.push(q, q + 1) // a doubled quote: one quote
          j = q + 2
          continue
        }
        i = q + 1
        break
      }
      // Junk after a closing quote (not RFC 4180): skipped up to the next separator.
      while (i < len && buf[i] !== COMMA && buf[i] !== LF && buf[i] !== CR) i++
    } else {
      const s = i
      while (i < len && buf[i] !== COMMA && buf[i] !== LF && buf[i] !== CR) i++
      parts.push(s, i)
    }
    if (i >= len) return pos
    const bytes = Buffer.concat(parts.flatMap((_, k) => (k % 2 === 0 ? [buf.subarray(parts[k], parts[k + 1])] : [])))
    addField(f, srcs.push(bytes) - 1, 0, bytes.length)
    const c = buf[i]
    if (c === COMMA) i++
    else if (c === LF) return i + 1
    else if (i + 1 < len && buf[i + 1] === LF) return i + 2
    else if (i + 1 >= len) return pos
    else i++
  }
}

/** One valid row: into its raw hour (if kept) and its day's partials (if kept). */
function addRow(imp: Import, f: Fields, created: number, hour: number, seq: number, sink: RawSink | undefined): void {
  const { srcs } = imp
  const nx = F_NX < f.count && f.end[F_NX]! - f.start[F_NX]! === 1 && srcs[f.src[F_NX]!]![f.start[F_NX]!] === 0x31
  const anonymous = F_USER >= f.count || f.end[F_USER] === f.start[F_USER]
  if (sink !== undefined) {
    const ch = sink.chunk
    const r = ch.rows++
    ch.setInt64(0, r, seq)
    ch.setInt64(1, r, created)
    if (anonymous) imp.setString(ch, 2, r, imp.anonymous)
    else ch.setBytes(2, r, srcs[f.src[F_USER]!]!, f.start[F_USER]!, f.end[F_USER]!)
    ch.setBool(3, r, nx)
    for (let k = F_ADDRESS, col = 4; k <= F_BLOCKEDCATS; k++, col++) {
      if (k < f.count) ch.setBytes(col, r, srcs[f.src[k]!]!, f.start[k]!, f.end[k]!)
      else imp.setString(ch, col, r, imp.empty)
    }
    if (ch.full) ch.flush(sink.appender)
  }
  const day = imp.dayOf(created)
  if (day < imp.w.keepDay) return
  const p = imp.partialsOf(day)
  const user = anonymous ? imp.anonymous : imp.field(f, F_USER)
  const host = imp.field(f, F_HOST)
  const block = imp.blockOf(imp.field(f, F_REASON))
  // Each row counts for its user and for the whole server (ALL_USERS, the console's overview).
  p.addHour(user, hour, block)
  p.addHour(imp.all, hour, block)
  p.addName(user, host, nx ? 1 : 0, block, f)
  p.addName(imp.all, host, nx ? 1 : 0, block, f)
}

/** The partials of each kept day into its hours_ and names_ partitions, and the days marked dirty (for compaction). */
async function appendSums(imp: Import): Promise<void> {
  const { c } = imp
  for (const [day, p] of imp.days) {
    const h = hoursTable(day)
    const n = namesTable(day)
    await c.run(`${hoursTableSql(h)}; ${namesTableSql(n)}`)
    const ha = await c.createAppender(h)
    try {
      const ch = new ChunkWriter(HOURS_TYPES, HOURS_KINDS)
      for (let i = 0; i < p.hUser.length; i++) {
        const r = ch.rows++
        imp.setString(ch, 0, r, p.hUser[i]!)
        ch.setInt32(1, r, p.hHour[i]!)
        ch.setInt64(2, r, p.hRequests[i]!)
        ch.setInt64(3, r, p.hBlocks[i]!)
        if (ch.full) ch.flush(ha)
      }
      ch.flush(ha)
    } finally {
      ha.closeSync()
    }
    const na = await c.createAppender(n)
    try {
      const ch = new ChunkWriter(NAMES_TYPES, NAMES_KINDS)
      for (let i = 0; i < p.nUser.length; i++) {
        const r = ch.rows++
        imp.setString(ch, 0, r, p.nUser[i]!)
        imp.setString(ch, 1, r, p.nHost[i]!)
        ch.setInt64(2, r, p.nRequests[i]!)
        ch.setInt64(3, r, p.nNx[i]!)
        ch.setInt64(4, r, p.nBlocks[i]!)
        ch.setBytes(5, r, imp.srcs[p.nCatsSrc[i]!]!, p.nCatsStart[i]!, p.nCatsEnd[i]!)
        ch.setInt64(6, r, imp.w.chunk)
        if (ch.full) ch.flush(na)
      }
      ch.flush(na)
    } finally {
      na.closeSync()
    }
  }
  if (imp.days.size > 0)
    await metaPutMany(
      c,
      [...imp.days.keys()].map((d) => [`dirty.${d}`, 1])
    )
}
