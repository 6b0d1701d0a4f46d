/**
 * The strict check of a closed statistics file before DuckDB reads it (engine/stats/importer.ts).
 *
 * DuckDB's CSV reader is lenient where the import must not be: with `ignore_errors` a record it
 * cannot read is dropped without a count, an unterminated quote runs on over the rows after it, a NUL
 * byte is stored in a host name, a record of two fields is padded into an anonymous row with an
 * empty host. So every record is checked here first, in one pass over the bytes (no string per
 * record), against what the writer (engine/querylog/csv.ts) writes:
 *
 *   - a record ends at its line feed (CRLF or LF), also inside quotes: the writer writes no line
 *     break in a field (names carry presentation escapes), and a stray quote must cost one record,
 *     not the ones after it;
 *   - at least 9 fields (files before `client_id` have 9; later columns are allowed);
 *   - `created` is 1 to 15 digits, `nxdomain` is `0` or `1`, `address` and `host` are not empty,
 *     `cats` and `blockedcats` hold digits and spaces;
 *   - no control byte anywhere (a CR only before the line feed); a quote opens a field or is doubled
 *     inside a quoted one, and a closing quote is followed by a comma or the line's end.
 *
 * A damaged record is reported with its line number and byte range; the importer reads a copy
 * without it and counts it in `skipped`. The bytes after the last line feed (a writer stopped
 * mid-row) are not a record: `end` says where the complete records end.
 */
import { open } from 'node:fs/promises'

/** One damaged record: its line (1 = the header), bytes [start, end) with its line feed, and why. */
export interface BadRecord {
  line: number
  start: number
  end: number
  why: string
}

export interface CsvCheck {
  /** The first line is a statistics header (else the file is not one of ours). */
  header: boolean
  /** The byte offset after the last line feed: where the complete records end. */
  end: number
  /** Complete records that pass (the header not counted). */
  good: number
  /** Damaged complete records, in file order; the scan stops after `maxBad + 1` of them. */
  bad: BadRecord[]
}

// The header of files before `client_id`; a current header starts with it too (columns only get added).
const HEADER_PREFIX = 'created,nxdomain,address,host,blockedhost,reasom,cats,blockedcats,user'
const MIN_FIELDS = 9
const MAX_CREATED_DIGITS = 15
const READ_BYTES = 1 << 20

const LF = 0x0a
const CR = 0x0d
const QUOTE = 0x22
const COMMA = 0x2c
const SPACE = 0x20
const ZERO = 0x30
const NINE = 0x39

// What each field may hold (by position): created, nxdomain, cats and blockedcats are checked byte by byte.
const ANY = 0
const DIGITS = 1
const BIT = 2
const DIGITS_SPACES = 3
const FIELD_CLASS = [DIGITS, BIT, ANY, ANY, ANY, ANY, DIGITS_SPACES, DIGITS_SPACES]

/** Scans `path` (its first `size` bytes) record by record; see the module comment for the rules. */
export async function checkCsvFile(path: string, size: number, maxBad: number): Promise<CsvCheck> {
  const scan = new RecordScan(maxBad)
  const fh = await open(path, 'r')
  try {
    const buf = Buffer.allocUnsafe(Math.min(READ_BYTES, Math.max(size, 1)))
    for (let pos = 0; pos < size && !scan.full();) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos)
      if (bytesRead === 0) break
      scan.feed(buf, bytesRead, pos)
      pos += bytesRead
    }
  } finally {
    await fh.close()
  }
  return { header: scan.header, end: scan.recStart, good: scan.good, bad: scan.bad }
}

/** The end of the run of bytes from `i` that a field of class `cls` takes without a second look. */
function plainRun(buf: Buffer, i: number, len: number, cls: number): number {
  if (cls === ANY) {
    for (; i < len; i++) {
      const c = buf[i]! // i < len
      if ((c < 0x2d && (c < SPACE || c === QUOTE || c === COMMA)) || c === 0x7f) break
    }
  } else if (cls === DIGITS) {
    for (; i < len; i++) {
      const c = buf[i]! // i < len
      if (c < ZERO || c > NINE) break
    }
  }
  return i
}

/**
 * The offset after the line feed of a plain, sound record starting at `i` (no quote, every rule
 * kept), or -1: anything else, or no line feed before `len`; the caller then checks it byte by byte.
 */
function plainRecord(buf: Buffer, i: number, len: number): number {
  let field = 0
  let n = 0
  for (; i < len; i++) {
    const c = buf[i]! // i < len
    if (c === COMMA || c === LF || c === CR) {
      if (field === 0 ? n === 0 || n > MAX_CREATED_DIGITS : field === 1 ? n !== 1 : field < 4 && n === 0) return -1
      if (c === COMMA) {
        field++
        n = 0
        continue
      }
      if (field < MIN_FIELDS - 1) return -1
      if (c === CR) {
        if (i + 1 >= len || buf[i + 1] !== LF) return -1
        i++
      }
      return i + 1
    }
    if (field === 0) {
      if (c < ZERO || c > NINE) return -1
    } else if (field === 1) {
      if (c !== ZERO && c !== ZERO + 1) return -1
    } else if (field === 6 || field === 7) {
      if (c !== SPACE && (c < ZERO || c > NINE)) return -1
    } else if (c < SPACE || c === QUOTE || c === 0x7f) return -1
    n++
  }
  return -1
}

class RecordScan {
  header = false
  good = 0
  readonly bad: BadRecord[] = []
  /** Offset where the current record starts (after the last line feed that ended a record). */
  recStart = 0
  #inHeader = true
  /** Line feeds so far, and the line the current record starts on. */
  #lfs = 0
  #line = 1
  #field = 0
  #fieldLen = 0
  /** 0 outside quotes, 1 inside, 2 just after a quote inside (closing, or the first of a pair). */
  #quote = 0
  #closed = false
  #cr = false
  #why = ''
  /** Offset of the last line feed inside the open quote, and how far the line after it looks like a record's start. */
  #breakAt = -1
  #probe = -1
  #probeDigits = 0
  /** At the first byte of a record (the fast path may take it). */
  #atStart = true
  readonly #maxBad: number

  constructor(maxBad: number) {
    this.#maxBad = maxBad
  }

  full(): boolean {
    return this.bad.length > this.#maxBad
  }

  feed(buf: Buffer, len: number, base: number): void {
    for (let i = 0; i < len; i++) {
      // Most records are plain (no quote, nothing wrong): one tight loop with its state in locals
      // takes a whole one (the check must not slow the import down). Anything else, and a record
      // that runs past this buffer, goes through the byte-by-byte machine below from its start.
      if (this.#atStart && !this.#inHeader) {
        const end = plainRecord(buf, i, len)
        if (end > 0) {
          this.good++
          this.#lfs++
          this.#line = this.#lfs + 1
          this.recStart = base + end
          i = end - 1
          continue
        }
        this.#atStart = false
      }
      // Plain text or digits inside an unquoted field of a sound record: a tight loop skips them,
      // stopping at the next byte that matters.
      if (this.#quote === 0 && this.#why === '' && !this.#inHeader && !this.#closed && !this.#cr) {
        const j = plainRun(buf, i, len, FIELD_CLASS[this.#field] ?? ANY)
        this.#fieldLen += j - i
        i = j
        if (i === len) break
      }
      const c = buf[i]! // i < len <= buf.length
      if (this.#quote === 1 && this.#why === '' && !this.#inHeader) {
        this.#quoted(c, base + i)
        continue
      }
      if (c === LF) {
        this.#lfs++
        this.#endRecord(base + i + 1, buf, i)
        if (this.full()) return
        continue
      }
      if (this.#inHeader || this.#why !== '') continue // the header is checked whole at its end; a damaged record is skipped to its end
      if (this.#cr) {
        this.#why = 'a CR inside the line'
        continue
      }
      if (this.#quote === 2) {
        if (c === QUOTE) {
          this.#quote = 1 // a doubled quote: one quote of the value
          this.#fieldLen++
          continue
        }
        this.#quote = 0
        this.#closed = true
      }
      if (c === COMMA) this.#endField()
      else if (c === CR) this.#cr = true
      else if (this.#closed) this.#why = 'text after a closing quote'
      else if (c === QUOTE) {
        if (this.#fieldLen === 0) this.#quote = 1
        else this.#why = 'a quote inside an unquoted field'
      } else this.#byte(c)
    }
  }

  /**
   * A byte inside quotes. A quoted field may hold a line break (RFC 4180), but a quote left open would
   * then run on over every row after it: when the line after a break inside quotes starts as a record
   * does (`<digits>,<0|1>,`), the quote was never closed, the damaged record ends at that break and
   * the next one starts after it.
   */
  #quoted(c: number, at: number): void {
    if (c === QUOTE) {
      this.#quote = 2
      this.#probe = -1
      return
    }
    if (c === LF) {
      this.#lfs++
      this.#breakAt = at
      this.#probe = 0
      this.#probeDigits = 0
      this.#fieldLen++
      return
    }
    if (this.#probe >= 0) this.#advanceProbe(c)
    if (this.#probe === 3) {
      this.#probe = -1
      this.#resync()
      return
    }
    if (c === CR)
      this.#fieldLen++ // a CRLF line break inside quotes
    else this.#byte(c)
  }

  // 0: a digit expected; 1: digits, then a comma; 2: 0 or 1 expected; 4: a comma expected; 3: matched.
  #advanceProbe(c: number): void {
    const digit = c >= ZERO && c <= NINE
    if (this.#probe <= 1 && digit && this.#probeDigits < MAX_CREATED_DIGITS) {
      this.#probe = 1
      this.#probeDigits++
    } else if (this.#probe === 1 && c === COMMA) this.#probe = 2
    else if (this.#probe === 2 && (c === ZERO || c === ZERO + 1)) this.#probe = 4
    else if (this.#probe === 4 && c === COMMA) this.#probe = 3
    else this.#probe = -1
  }

  // The open quote's record ends at the last break inside it; the bytes since are the next record's
  // `created,nxdomain,`, already checked by the probe.
  #resync(): void {
    const end = this.#breakAt + 1
    this.bad.push({ line: this.#line, start: this.recStart, end, why: 'an unterminated quote' })
    this.#line = this.#lfs + 1
    this.recStart = end
    this.#field = 2
    this.#fieldLen = 0
    this.#quote = 0
    this.#closed = false
    this.#cr = false
    this.#why = ''
  }

  #byte(c: number): void {
    if (c < SPACE || c === 0x7f) {
      if (this.#why === '') this.#why = c === 0 ? 'a NUL byte' : 'a control byte'
      return
    }
    const cls = FIELD_CLASS[this.#field] ?? ANY
    const ok =
      cls === ANY ||
      (c >= ZERO && c <= NINE && cls !== BIT) ||
      (cls === BIT && (c === ZERO || c === ZERO + 1)) ||
      (cls === DIGITS_SPACES && c === SPACE)
    if (!ok && this.#why === '') this.#why = `a bad byte in field ${this.#field + 1}`
    this.#fieldLen++
  }

  #endField(): void {
    if (this.#why === '') {
      const n = this.#fieldLen
      if (this.#field === 0 && n === 0) this.#why = 'no time (created)'
      else if (this.#field === 0 && n > MAX_CREATED_DIGITS) this.#why = 'a time (created) out of range'
      else if (this.#field === 1 && n !== 1) this.#why = 'no nxdomain flag'
      else if (this.#field === 2 && n === 0) this.#why = 'no address'
      else if (this.#field === 3 && n === 0) this.#why = 'no host'
    }
    this.#field++
    this.#fieldLen = 0
    this.#closed = false
  }

  // `end` is the offset after the line feed at `buf[i]`.
  #endRecord(end: number, buf: Buffer, i: number): void {
    if (this.#inHeader) {
      // The header is short: its text is taken from this buffer when it holds it whole, else it is not ours.
      const n = end - 1 - this.recStart
      this.header = i >= n && buf.toString('latin1', i - n, i).startsWith(HEADER_PREFIX)
      this.#inHeader = false
    } else {
      if (this.#why === '') {
        this.#quote = 0
        this.#endField()
        if (this.#why === '' && this.#field < MIN_FIELDS) this.#why = `${this.#field} fields, fewer than ${MIN_FIELDS}`
      }
      if (this.#why === '') this.good++
      else this.bad.push({ line: this.#line, start: this.recStart, end, why: this.#why })
    }
    this.#line = this.#lfs + 1
    this.recStart = end
    this.#field = 0
    this.#fieldLen = 0
    this.#quote = 0
    this.#closed = false
    this.#cr = false
    this.#why = ''
    this.#atStart = true
  }
}
