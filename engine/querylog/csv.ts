/**
 * The statistics CSV format (RFC 4180): one header line, then one record per query, CRLF line
 * breaks, a field quoted only when it holds a comma, a double quote, CR or LF (quotes doubled).
 *
 * Columns, in order (the spec's raw-report fields, then the user):
 *   created      milliseconds since the epoch (UTC), an integer
 *   nxdomain     1 when the answer was NXDOMAIN, else 0
 *   address      the client address the policy was chosen by
 *   host         the query name, lower case, no trailing dot
 *   blockedhost  the list entry or category key that caused a block, '' otherwise
 *   reasom       the policy reason (spelled as the spec spells the field)
 *   cats         categories of the name, space-separated integers ('' when none)
 *   blockedcats  categories that caused a category block, space-separated
 *   user         the user owning the address when the query was made, '' for anonymous
 *   client_id    the client ID the query came with (DoH path, DoT server name), '' when none
 *   source       where the deciding entry came from: `list:<id>` (a list subscription), `rpz:<zone>`
 *                (an RPZ feed); '' for the operator's own lists, the category database and the rest
 *
 * Columns are only ever added at the end: a reader takes the columns it knows by position and reads a
 * missing trailing one as '' (files written before `client_id` existed import as they did).
 *
 * The parser works on a latin1 view of the bytes so that string offsets are byte offsets (the
 * importer records its progress in bytes); text fields are re-decoded as UTF-8 when they hold
 * non-ASCII bytes.
 */

export const CSV_FIELDS = [
  'created',
  'nxdomain',
  'address',
  'host',
  'blockedhost',
  'reasom',
  'cats',
  'blockedcats',
  'user',
  'client_id',
  'source'
] as const
export const CSV_HEADER = CSV_FIELDS.join(',') + '\r\n'

/** One parsed statistics row. */
export interface StatsRow {
  created: number
  nxdomain: boolean
  address: string
  host: string
  blockedHost: string
  reason: string
  cats: number[]
  blockedCats: number[]
  /** '' for an anonymous address. */
  user: string
  /** '' when the query came with no client ID. */
  clientId: string
  /** `list:<id>` or `rpz:<zone>` (engine/policy `Verdict.source`); absent when the row names none. */
  source?: string
}

const NEEDS_QUOTES = /[",\r\n]/

/** Quotes one field when RFC 4180 requires it. */
function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? '"' + value.replaceAll('"', '""') + '"' : value
}

/**
 * The most bytes `encodeRow` can write for these values: UTF-8 takes at most 3 bytes per UTF-16
 * unit, and quoting at most doubles a field and adds 2 quotes; a number takes at most 21 bytes.
 */
export function rowBound(
  address: string,
  host: string,
  blockedHost: string,
  reason: string,
  cats: readonly number[],
  blockedCats: readonly number[],
  user: string | null,
  clientId: string | null = null,
  source = ''
): number {
  const text =
    address.length +
    host.length +
    blockedHost.length +
    reason.length +
    (user === null ? 0 : user.length) +
    (clientId === null ? 0 : clientId.length) +
    source.length
  return 6 * text + 22 * (cats.length + blockedCats.length) + 64
}

/**
 * Writes one CSV record (with its CRLF) into `buf` at `off` and returns the offset after it. The
 * caller leaves at least `rowBound(...)` bytes of room. This is the statistics writer's packet
 * path: bytes go straight into its chunk, with no string built per row (a row's strings used to
 * be most of what a forwarded query allocated).
 */
export function encodeRow(
  buf: Buffer,
  off: number,
  created: number,
  nxdomain: boolean,
  address: string,
  host: string,
  blockedHost: string,
  reason: string,
  cats: readonly number[],
  blockedCats: readonly number[],
  user: string | null,
  clientId: string | null = null,
  source = ''
): number {
  off = writeCreated(buf, off, created)
  buf[off++] = 0x2c
  buf[off++] = nxdomain ? 0x31 : 0x30
  off = writeField(buf, comma(buf, off), address)
  off = writeField(buf, comma(buf, off), host)
  off = writeField(buf, comma(buf, off), blockedHost)
  off = writeField(buf, comma(buf, off), reason)
  off = writeCats(buf, comma(buf, off), cats)
  off = writeCats(buf, comma(buf, off), blockedCats)
  off = comma(buf, off)
  if (user !== null) off = writeField(buf, off, user)
  off = comma(buf, off)
  if (clientId !== null) off = writeField(buf, off, clientId)
  off = comma(buf, off)
  if (source !== '') off = writeField(buf, off, source)
  buf[off++] = 0x0d
  buf[off++] = 0x0a
  return off
}

/** One CSV record (with its CRLF) for the given values, as text (tests, tools). */
export function formatRow(
  created: number,
  nxdomain: boolean,
  address: string,
  host: string,
  blockedHost: string,
  reason: string,
  cats: readonly number[],
  blockedCats: readonly number[],
  user: string | null,
  clientId: string | null = null,
  source = ''
): string {
  const buf = Buffer.allocUnsafe(
    rowBound(address, host, blockedHost, reason, cats, blockedCats, user, clientId, source)
  )
  const end = encodeRow(
    buf,
    0,
    created,
    nxdomain,
    address,
    host,
    blockedHost,
    reason,
    cats,
    blockedCats,
    user,
    clientId,
    source
  )
  return buf.toString('utf8', 0, end)
}

// The rows of one millisecond share `created`: its digits are written once and copied after (13
// digits cost 26 floating-point divisions, a visible share of a row at 100k rows/s).
let lastCreated = -1
let lastCreatedLength = 0
const lastCreatedDigits = Buffer.alloc(32)

function writeCreated(buf: Buffer, off: number, created: number): number {
  if (created !== lastCreated) {
    lastCreatedLength = writeNumber(lastCreatedDigits, 0, created)
    lastCreated = created
  }
  const d = lastCreatedDigits
  for (let i = 0; i < lastCreatedLength; i++) buf[off + i] = d[i]! // i < lastCreatedLength <= d.length
  return off + lastCreatedLength
}

function comma(buf: Buffer, off: number): number {
  buf[off] = 0x2c
  return off + 1
}

// ASCII goes byte by byte: a field is a few dozen characters, for which this loop is cheaper than
// Buffer#write's argument handling. A quote, comma, CR, LF or non-ASCII character takes the general path.
function writeField(buf: Buffer, off: number, value: string): number {
  const n = value.length
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i)
    if (c >= 0x80 || c === 0x22 || c === 0x2c || c === 0x0d || c === 0x0a) return writeText(buf, off, value)
    buf[off + i] = c
  }
  return off + n
}

function writeText(buf: Buffer, off: number, value: string): number {
  return off + buf.write(csvField(value), off)
}

function writeCats(buf: Buffer, off: number, cats: readonly number[]): number {
  for (let i = 0; i < cats.length; i++) {
    if (i !== 0) buf[off++] = 0x20
    off = writeNumber(buf, off, cats[i]!) // i < length
  }
  return off
}

// Decimal digits of a non-negative integer without a string; anything else as String() spells it.
function writeNumber(buf: Buffer, off: number, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) return off + buf.write(String(n), off, 'latin1')
  let digits = 1
  for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++
  const end = off + digits
  for (let i = end - 1; i >= off; i--) {
    buf[i] = 0x30 + (n % 10)
    n = Math.floor(n / 10)
  }
  return end
}

/**
 * Parses complete records of `text` from `start`, at most `maxRecords`, into `out` (arrays of raw
 * field strings). A record is complete once its line break (LF, optionally after CR) has been seen
 * outside quotes; an unfinished record at the end is left for later. Returns the offset after the
 * last complete record.
 */
export function parseRecords(text: string, start: number, maxRecords: number, out: string[][]): number {
  let pos = start
  const len = text.length
  while (out.length < maxRecords && pos < len) {
    const fields: string[] = []
    let i = pos
    let complete = false
    for (;;) {
      if (i >= len) break
      if (text.charCodeAt(i) === 0x22) {
        // quoted field
        let value = ''
        let j = i + 1
        let closed = false
        while (j < len) {
          const q = text.indexOf('"', j)
          if (q < 0) {
            j = len
            break
          }
          if (text.charCodeAt(q + 1) === 0x22) {
            value += text.slice(j, q + 1)
            j = q + 2
            continue
          }
          if (q + 1 >= len) {
            value += text.slice(j, q)
            j = q + 1
            closed = true
            break
          }
          value += text.slice(j, q)
          j = q + 1
          closed = true
          break
        }
        if (!closed) break
        fields.push(value)
        i = j
      } else {
        let j = i
        while (j < len) {
          const c = text.charCodeAt(j)
          if (c === 0x2c || c === 0x0a || c === 0x0d) break
          j++
        }
        fields.push(text.slice(i, j))
        i = j
      }
      if (i >= len) break
      const c = text.charCodeAt(i)
      if (c === 0x2c) {
        i++
        continue
      }
      if (c === 0x0d) {
        if (i + 1 >= len) break
        if (text.charCodeAt(i + 1) === 0x0a) {
          i += 2
          complete = true
          break
        }
        i++ // a lone CR ends nothing; treat it as part of the separator run
        continue
      }
      if (c === 0x0a) {
        i++
        complete = true
        break
      }
      // Junk after a closing quote (not RFC 4180): skip to the next separator.
      while (i < len && text.charCodeAt(i) !== 0x2c && text.charCodeAt(i) !== 0x0a) i++
      if (i < len && text.charCodeAt(i) === 0x2c) i++
    }
    if (!complete) break
    out.push(fields)
    pos = i
  }
  return pos
}

const NON_ASCII = /[\x80-\xff]/

function utf8(latin1: string): string {
  return NON_ASCII.test(latin1) ? Buffer.from(latin1, 'latin1').toString('utf8') : latin1
}

function parseCats(text: string | undefined): number[] {
  if (text === undefined || text === '') return []
  const out: number[] = []
  for (const part of text.split(' ')) {
    const n = Number(part)
    if (part !== '' && Number.isInteger(n)) out.push(n)
  }
  return out
}

/** Decodes raw fields into a row; `undefined` for the header or a record that does not parse. */
export function decodeRow(fields: readonly string[]): StatsRow | undefined {
  if (fields.length < 8) return undefined
  const created = Number(fields[0])
  if (!Number.isFinite(created) || fields[0] === '') return undefined
  const source = utf8(fields[10] ?? '')
  return {
    created,
    nxdomain: fields[1] === '1',
    address: utf8(fields[2]!),
    host: utf8(fields[3]!),
    blockedHost: utf8(fields[4]!),
    reason: utf8(fields[5]!),
    cats: parseCats(fields[6]),
    blockedCats: parseCats(fields[7]),
    user: utf8(fields[8] ?? ''),
    clientId: utf8(fields[9] ?? ''),
    ...(source === '' ? {} : { source })
  }
}
