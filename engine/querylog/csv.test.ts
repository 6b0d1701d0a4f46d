import { test, type TestContext } from 'node:test'
import { CSV_HEADER, decodeRow, formatRow, parseRecords } from './csv.js'

test('quotes names with commas, quotes and line breaks and parses them back unchanged', (t: TestContext) => {
  const names = [
    'plain.example',
    'a,b.example',
    'say "hi".example',
    'line\r\nbreak.example',
    '"',
    ',',
    '',
    'ünï.example'
  ]
  let text = CSV_HEADER
  for (const [i, n] of names.entries())
    text += formatRow(1000 + i, i % 2 === 0, '10.0.0.1', n, n, 'category', [1, 2], [2], i === 0 ? null : `u${i}`)
  const latin1 = Buffer.from(text, 'utf8').toString('latin1')
  const out: string[][] = []
  const end = parseRecords(latin1, 0, Infinity, out)
  t.assert.strictEqual(end, latin1.length)
  t.assert.strictEqual(out.length, names.length + 1)
  const rows = out.slice(1).map((f) => decodeRow(f)!)
  t.assert.deepStrictEqual(
    rows.map((r) => r.host),
    names
  )
  t.assert.deepStrictEqual(
    rows.map((r) => r.blockedHost),
    names
  )
  t.assert.deepStrictEqual(rows[0], {
    created: 1000,
    nxdomain: true,
    address: '10.0.0.1',
    host: 'plain.example',
    blockedHost: 'plain.example',
    reason: 'category',
    cats: [1, 2],
    blockedCats: [2],
    user: '',
    clientId: ''
  })
  t.assert.strictEqual(rows[3]!.user, 'u3')
  t.assert.strictEqual(decodeRow(out[0]!), undefined, 'the header is not a row')
})

test('leaves an unfinished record at the end for the next read', (t: TestContext) => {
  const full = formatRow(1, false, '::1', 'x.example', '', 'none', [], [], null)
  const partial = formatRow(2, false, '::1', '"quoted, unfinished', '', 'none', [], [], null)
  for (let cut = 1; cut < partial.length - 1; cut++) {
    const out: string[][] = []
    const end = parseRecords(full + partial.slice(0, cut), 0, Infinity, out)
    t.assert.strictEqual(out.length, 1, `cut at ${cut}`)
    t.assert.strictEqual(end, full.length)
  }
})

test('stops after the requested number of records', (t: TestContext) => {
  const text = [1, 2, 3].map((i) => formatRow(i, false, '::1', `n${i}`, '', 'none', [], [], null)).join('')
  const out: string[][] = []
  const end = parseRecords(text, 0, 2, out)
  t.assert.strictEqual(out.length, 2)
  const rest: string[][] = []
  parseRecords(text, end, 10, rest)
  t.assert.deepStrictEqual(
    rest.map((f) => f[3]),
    ['n3']
  )
})

test('rows of the same millisecond and of the next one each carry their own time', (t: TestContext) => {
  const times = [1764000000123, 1764000000123, 1764000000124, 5, 1764000000123, 0, 1.5]
  const rows = times.map((ms) => formatRow(ms, false, '10.0.0.1', 'a.example', '', 'category', [], [], null))
  t.assert.deepStrictEqual(
    rows.map((r) => r.split(',')[0]),
    times.map(String)
  )
})

test('the client_id column closes each row; rows written before it existed read as without one', (t: TestContext) => {
  t.assert.match(CSV_HEADER, /,user,client_id,source\r\n$/)
  const withId = formatRow(7, false, '10.0.0.1', 'a.example', '', 'none', [], [], 'alice', 'kid-phone')
  const without = formatRow(8, false, '10.0.0.1', 'a.example', '', 'none', [], [], null)
  t.assert.ok(withId.endsWith(',alice,kid-phone,\r\n'), withId)
  t.assert.ok(without.endsWith(',,,\r\n'), without)
  const before = '9,0,10.0.0.1,a.example,,none,,,bob\r\n' // the nine columns of older files
  const out: string[][] = []
  parseRecords(withId + without + before, 0, Infinity, out)
  t.assert.deepStrictEqual(
    out.map((f) => [decodeRow(f)!.user, decodeRow(f)!.clientId]),
    [
      ['alice', 'kid-phone'],
      ['', ''],
      ['bob', '']
    ]
  )
})

test('the source column names the subscription or feed that decided; rows without it read as none', (t: TestContext) => {
  const listed = formatRow(
    7,
    false,
    '10.0.0.1',
    'ads.example',
    'ads.example',
    'global-blacklist',
    [],
    [],
    'alice',
    null,
    'list:ads'
  )
  const fed = formatRow(8, false, '10.0.0.1', 'x.example', 'x.example', 'rpz', [], [], null, 'kid1', 'rpz:feed.rpz')
  t.assert.ok(listed.endsWith(',alice,,list:ads\r\n'), listed)
  const before = '9,0,10.0.0.1,a.example,,none,,,bob,kid1\r\n' // the ten columns of older files
  const out: string[][] = []
  parseRecords(listed + fed + before, 0, Infinity, out)
  const rows = out.map((f) => decodeRow(f)!)
  t.assert.deepStrictEqual(
    rows.map((r) => [r.reason, r.source]),
    [
      ['global-blacklist', 'list:ads'],
      ['rpz', 'rpz:feed.rpz'],
      ['none', undefined]
    ]
  )
})
