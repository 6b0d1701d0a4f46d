import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { openClickHouse } from './client.js'
import { MAX_LITERAL_LENGTH, isSqlIdent, sqlIdent, sqlString, sqlStringList, sqlUInt } from './sql.js'
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
