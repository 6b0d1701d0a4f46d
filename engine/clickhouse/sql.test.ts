import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { openClickHouse } from './client.js'
import { MAX_LITERAL_LENGTH, isSqlIdent, sqlIdent, sqlString, sqlStringList, sqlUInt, tsvField } from './sql.js'
import { skipWithoutClickHouse, startClickHouse } from './testing/server.js'

/** Values an attacker controls: a user name, a query name, a client ID reach these literals. */
const HOSTILE = [
  '',
  'plain',
  "o'brien",
  "'",
  "''",
  "\\'",
  '\\',
  'ends with a backslash\\',
  "'; DROP TABLE queries; --",
  "' OR '1'='1",
  'nul\u0000inside',
  '\u0000',
  'tab\tcr\rlf\nbell\u0007esc\u001bdel\u007f',
  '\\x41 is not an escape here',
  '\\0\\n\\t',
  '`backticks` and "double quotes"',
  '{shard} {replica} $1 ?',
  'ünïcödé 名前 😀',
  '\u2028\u2029',
  'x'.repeat(MAX_LITERAL_LENGTH),
  "'\\\u0000\n".repeat(MAX_LITERAL_LENGTH / 4)
]

test('a string literal keeps the SQL outside it: no quote or backslash reaches the text unescaped', () => {
  for (const v of HOSTILE) {
    const lit = sqlString(v)
    assert.ok(lit.startsWith("'") && lit.endsWith("'"))
    const inner = lit.slice(1, -1)
    // Every quote inside is preceded by an odd run of backslashes (escaped), and no control byte is left.
    assert.doesNotMatch(inner, /(^|[^\\])(\\\\)*'/)
    assert.doesNotMatch(inner, /[\x00-\x1f\x7f]/)
  }
})

test('names, numbers and lists are checked, not quoted cleverly', () => {
  assert.equal(sqlIdent('filterd_stats'), '`filterd_stats`')
  for (const bad of ['', '1db', 'a-b', 'a`b', 'a.b', "a'", 'a b', 'x'.repeat(65), 'ünï'])
    assert.throws(() => sqlIdent(bad), { code: 'ENGINE_CLICKHOUSE_LITERAL' }, bad)
  assert.equal(isSqlIdent('_x9'), true)
  assert.equal(isSqlIdent('x;'), false)
  assert.equal(sqlUInt(0), '0')
  assert.equal(sqlUInt(2 ** 53 - 1), '9007199254740991')
  for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 53])
    assert.throws(() => sqlUInt(bad), { code: 'ENGINE_CLICKHOUSE_LITERAL' })
  assert.throws(() => sqlString(42 as unknown as string), { code: 'ENGINE_CLICKHOUSE_LITERAL' })
  // Past the limit a string is refused whole, never cut: a cut literal would match another value.
  assert.throws(() => sqlString('x'.repeat(MAX_LITERAL_LENGTH + 1)), { code: 'ENGINE_CLICKHOUSE_LITERAL' })
  assert.throws(() => sqlString("'".repeat(1_000_000)), { code: 'ENGINE_CLICKHOUSE_LITERAL' })
  assert.equal(sqlStringList([]), "''")
  assert.equal(sqlStringList(['a', "b'"]), "'a', 'b\\''")
})

test(
  'every hostile string reads back from ClickHouse byte for byte, and a table beside it survives',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'default' })
    t.after(() => ch.close())
    await ch.command('CREATE TABLE default.victim (x UInt8) ENGINE = Memory')
    await ch.command('INSERT INTO default.victim VALUES (1)')
    for (const v of HOSTILE) {
      const [row] = await ch.rows(`SELECT ${sqlString(v)} AS v, length(${sqlString(v)}) AS n`)
      assert.equal(row?.v, v, JSON.stringify(v.slice(0, 40)))
      assert.equal(Number(row?.n), Buffer.byteLength(v))
      // As a filter too: the literal matches itself and nothing else.
      const [c] = await ch.rows(
        `SELECT count() AS c FROM default.victim WHERE ${sqlString(v)} = ${sqlString('y' + v.slice(1))}`
      )
      assert.equal(Number(c?.c), 0)
    }
    const [left] = await ch.rows('SELECT count() AS c FROM default.victim')
    assert.equal(Number(left?.c), 1)
    // A lone surrogate is not text: it travels as U+FFFD, as every UTF-8 encoder spells it.
    const [s] = await ch.rows(`SELECT ${sqlString('a\ud800b')} AS v`)
    assert.equal(s?.v, 'a\ufffdb')
  }
)

/** Hostile fields of the sink's TabSeparated rows: names and client IDs come from the network. */
const HOSTILE_FIELDS = [
  ...HOSTILE,
  'a\tb',
  'line\nbreak',
  '\t\n\r\u0000\\',
  'ends with a tab\t',
  '\\t is two characters',
  '\\\n',
  '\\N',
  '"quoted" and \'single\'',
  'x'.repeat(1 << 20),
  '\t\\\n'.repeat(100_000)
]

/** The TabSeparated unescaping of the escapes tsvField writes (what the server does, for the unit test). */
function unescapeTsv(field: string): string {
  const of: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r', '0': '\u0000' }
  return field.replace(/\\(.)/gs, (_, c: string) => of[c] ?? `\\${c}`)
}

test('a TabSeparated field cannot end its column or row: no tab, line break or NUL is left, and it unescapes to itself', () => {
  for (const v of HOSTILE_FIELDS) {
    const f = tsvField(v)
    assert.doesNotMatch(f, /[\t\n\r\x00]/)
    // Every backslash starts one of the escapes (so none escapes the field's end).
    assert.doesNotMatch(f.replace(/\\[\\tnr0]/g, ''), /\\/)
    assert.equal(unescapeTsv(f), v, JSON.stringify(v.slice(0, 40)))
  }
  assert.equal(tsvField('plain.example'), 'plain.example')
  assert.equal(tsvField('a\tb\\c\nd'), 'a\\tb\\\\c\\nd')
})

test(
  'every hostile field inserted as TabSeparated reads back from ClickHouse byte for byte, one row each',
  { skip: skipWithoutClickHouse() },
  async (t: TestContext) => {
    const server = await startClickHouse()
    t.after(() => server.stop())
    const ch = openClickHouse({ url: server.url, user: 'default', password: '', database: 'default' })
    t.after(() => ch.close())
    await ch.command('CREATE TABLE default.tsv (i UInt32, v String) ENGINE = Memory')
    // As text (UTF-8), and as the sink sends it: bytes read as latin1, not all of them UTF-8.
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
    const body = Buffer.concat([
      Buffer.from(HOSTILE_FIELDS.map((v, i) => `${i}\t${tsvField(v)}\n`).join(''), 'utf8'),
      Buffer.from(`${HOSTILE_FIELDS.length}\t${tsvField(bytes.toString('latin1'))}\n`, 'latin1')
    ])
    await ch.insertTabSeparated('tsv', ['i', 'v'], body)
    const rows = await ch.rows('SELECT i, hex(v) AS h FROM default.tsv ORDER BY i')
    assert.equal(rows.length, HOSTILE_FIELDS.length + 1, 'one row per field: none split, none joined')
    for (const [i, v] of HOSTILE_FIELDS.entries())
      assert.equal(rows[i]?.h, Buffer.from(v, 'utf8').toString('hex').toUpperCase(), JSON.stringify(v.slice(0, 40)))
    assert.equal(rows[HOSTILE_FIELDS.length]?.h, bytes.toString('hex').toUpperCase(), 'every byte value')
  }
)
