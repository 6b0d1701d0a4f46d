/**
 * Values as ClickHouse SQL literals: the one way a value reaches the text of a query to ClickHouse.
 *
 * Why literals: ClickHouse 18.16 (Debian 12's) refuses the `param_<name>` settings that carry the
 * client's `query_params`, so a user name, a batch identity or a host name goes into the SQL text. This
 * module is therefore the security boundary of the ClickHouse store: every string is quoted here, every
 * identifier and number is checked here, and nothing else builds a literal
 * (engine/clickhouse/sql.test.ts runs hostile input through a real server and reads it back).
 *
 * A string becomes `'…'` with the backslash, the quote and every control byte (below 0x20, and 0x7f)
 * escaped: `\\`, `\'` and `\xHH`, which ClickHouse reads back byte for byte in every version. Other
 * characters travel as UTF-8 as they are; a lone UTF-16 surrogate (not text) becomes U+FFFD, as in
 * every UTF-8 encoding of a JavaScript string.
 *
 * The sink's rows are not SQL but data after `FORMAT TabSeparated`, and take the same care here:
 * `tsvField` escapes a field of it (see there).
 */
import { EngineError } from '../errors.js'

const NEEDS_ESCAPE = /[\\'\x00-\x1f\x7f]/
const ESCAPED = /[\\'\x00-\x1f\x7f]/g

function escapeOne(c: string): string {
  if (c === '\\') return '\\\\'
  if (c === "'") return "\\'"
  return '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0')
}

/**
 * The longest string taken, in UTF-16 units. Escaped, it takes at most 4 bytes a unit (`\\xHH`), so a
 * query with a few of them stays under ClickHouse's `max_query_size` (256 KiB by default), beyond
 * which the server refuses the query's text. The store's values are user ids, names and client IDs:
 * a longer one is not a value of ours but an attack, refused here.
 */
export const MAX_LITERAL_LENGTH = 16_384

/** `value` as a ClickHouse string literal. */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw literalError('a string', value)
  if (value.length > MAX_LITERAL_LENGTH)
    throw literalError(`a string of at most ${MAX_LITERAL_LENGTH} characters`, value)
  return NEEDS_ESCAPE.test(value) ? `'${value.replace(ESCAPED, escapeOne)}'` : `'${value}'`
}

/** A non-negative safe integer as a literal (days, hours, milliseconds, limits). */
export function sqlUInt(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw literalError('a non-negative integer', value)
  return String(value)
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/**
 * A database, table or cluster name as a quoted identifier. Only names of letters, digits and `_` (not
 * first a digit, at most 64) are taken: they need no escaping in any version, and a config key that
 * names something else is refused at start rather than quoted cleverly.
 */
export function sqlIdent(name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) throw literalError('a name of [A-Za-z0-9_]', name)
  return '`' + name + '`'
}

/** Whether `name` is taken by `sqlIdent` (the config's check of `stats.clickhouse.database`). */
export function isSqlIdent(name: string): boolean {
  return IDENTIFIER.test(name)
}

/** `a, b, c` of string literals, for `IN (…)`; `''` alone for no value (an `IN ()` is not SQL). */
export function sqlStringList(values: readonly string[]): string {
  return values.length === 0 ? "''" : values.map(sqlString).join(', ')
}

const TSV_NEEDS_ESCAPE = /[\\\t\n\r\x00]/
const TSV_ESCAPED = /[\\\t\n\r\x00]/g
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x00': '\\0' }

/**
 * `value` as one field of ClickHouse's `TabSeparated` format: the backslash, tab, LF, CR and NUL as
 * `\\`, `\t`, `\n`, `\r`, `\0`, which every version reads back as the byte they stand for; every
 * other character as it is. A field escaped here cannot end its row or its column early, so a name
 * holding a tab or a line break is one value, never a second row. No length limit: rows are data, not
 * the query's text (`max_query_size` does not apply to them). Works on text and on a latin1 view of
 * bytes alike (the sink's, engine/clickhouse/batches.ts): the escapes are ASCII.
 */
export function tsvField(value: string): string {
  return TSV_NEEDS_ESCAPE.test(value) ? value.replace(TSV_ESCAPED, (c) => TSV_ESCAPES[c]!) : value
}

function literalError(what: string, value: unknown): EngineError {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : String(value)
  return new EngineError('ENGINE_CLICKHOUSE_LITERAL', `not ${what} for a ClickHouse query: ${shown}`)
}
