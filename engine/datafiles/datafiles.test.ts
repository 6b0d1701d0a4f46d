import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDataFile, parseDataLine, ErrorLog } from './parse.js'
import { fileURLToPath } from 'node:url'
import { readLayers, mergeLayers, createLayersReport, type LayerOp } from './layers.js'
import { loadTaxonomy } from '../categories/taxonomy.js'
import { tempDir } from '../testing/temp.js'

function fixture(t: TestContext, files: Record<string, string>): string {
  const dir = tempDir(t, 'datafiles-')
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

test('parses tab and space separated entries and ignores comments and blank lines', async (t: TestContext) => {
  const dir = fixture(t, {
    'a.txt':
      '\uFEFF# header comment\n\nexample.com\t40\r\n  video.example   50,40,50   # trailing comment\n\t\n# done\n'
  })
  const entries = await collect(parseDataFile(join(dir, 'a.txt'), {}, 'a.txt'))
  t.assert.deepStrictEqual(entries, [
    { key: 'example.com', isUrl: false, cats: [40], file: 'a.txt', line: 3 },
    { key: 'video.example', isUrl: false, cats: [40, 50], file: 'a.txt', line: 4 }
  ])
})

test('gives an IDN in Unicode and in punycode the same key', async (t: TestContext) => {
  const dir = fixture(t, { 'a.txt': 'Кремль.РФ 85\nxn--e1ajeds9e.xn--p1ai. 81\n' })
  const keys = (await collect(parseDataFile(join(dir, 'a.txt')))).map((e) => e.key)
  t.assert.deepStrictEqual(keys, ['xn--e1ajeds9e.xn--p1ai', 'xn--e1ajeds9e.xn--p1ai'])
})

test('reads URL entries with the host normalised and the path kept as written', async (t: TestContext) => {
  const dir = fixture(t, { 'a.txt': 'Example.COM/Videos/Clip?id=A#x 50\nhttp://example.org/A 70\n' })
  const entries = await collect(parseDataFile(join(dir, 'a.txt')))
  t.assert.deepStrictEqual(
    entries.map((e) => [e.key, e.isUrl]),
    [
      ['example.com/Videos/Clip?id=A#x', true],
      ['example.org/A', true]
    ]
  )
})

test('reports malformed lines with file and line number instead of skipping them silently', async (t: TestContext) => {
  const dir = fixture(t, {
    'bad.txt': [
      'ok.example 40', // 1
      'missing-cats.example', // 2
      'bad name.example 40', // 3: three fields
      'bad!name.example 40', // 4
      'x.example 4a', // 5
      'y.example 9999', // 6: unknown
      'z.example 0', // 7: reserved
      'w.example 40,', // 8: empty category
      'ok2.example 41 # fine' // 9
    ].join('\n')
  })
  const errors = new ErrorLog()
  const known = new Set([40, 41])
  const entries = await collect(
    parseDataFile(join(dir, 'bad.txt'), { errors, isKnownCategory: (n) => known.has(n) }, 'bad.txt')
  )
  t.assert.deepStrictEqual(
    entries.map((e) => e.line),
    [1, 9]
  )
  t.assert.deepStrictEqual(
    errors.errors.map((e) => [e.file, e.line]),
    [2, 3, 4, 5, 6, 7, 8].map((l) => ['bad.txt', l])
  )
  t.assert.match(errors.errors[0]!.message, /missing category list/)
  t.assert.match(errors.errors[3]!.message, /invalid category "4a"/)
  t.assert.match(errors.errors[4]!.message, /unknown category 9999/)
  t.assert.match(errors.errors[5]!.message, /reserved/)
  t.assert.match(errors.format(), /^bad\.txt:2: missing category list/)
})

test('keeps only the first errors in memory but counts all of them', async (t: TestContext) => {
  const dir = fixture(t, { 'bad.txt': 'nocats\n'.repeat(50) })
  const errors = new ErrorLog(5)
  await collect(parseDataFile(join(dir, 'bad.txt'), { errors }))
  t.assert.strictEqual(errors.errors.length, 5)
  t.assert.strictEqual(errors.count, 50)
  t.assert.match(errors.format(), /and 45 more errors/)
})

test('treats a hash inside a URL path as part of the path, not a comment', (t: TestContext) => {
  t.assert.deepStrictEqual(parseDataLine('a.example/p#frag 40 # note'), {
    kind: 'entry',
    key: 'a.example/p#frag',
    isUrl: true,
    cats: [40]
  })
  t.assert.deepStrictEqual(parseDataLine('   # only a comment'), { kind: 'blank' })
  t.assert.deepStrictEqual(parseDataLine('gone.example -'), {
    kind: 'entry',
    key: 'gone.example',
    isUrl: false,
    cats: null
  })
})

test('yields the last file first so that plain puts and deletes give the layered result', async (t: TestContext) => {
  const dir = fixture(t, { '1.txt': 'a.example 41\n', '2.txt': 'a.example 40\nb.example 50\n' })
  const ops = await collect(readLayers(dir, ['1.txt', '2.txt']))
  t.assert.deepStrictEqual(
    ops.map((o: LayerOp) => [o.file, o.key]),
    [
      ['2.txt', 'a.example'],
      ['2.txt', 'b.example'],
      ['1.txt', 'a.example']
    ]
  )
})

test('lets the first file override the categories of later files entirely, not as a union', async (t: TestContext) => {
  const dir = fixture(t, { 'corr.txt': 'a.example 41\n', 'base.txt': 'a.example 40,50\nb.example 50\n' })
  const { entries } = await mergeLayers(dir, ['corr.txt', 'base.txt'])
  t.assert.deepStrictEqual(entries.get('a.example')?.cats, [41])
  t.assert.strictEqual(entries.get('a.example')?.file, 'corr.txt')
  t.assert.deepStrictEqual(entries.get('b.example')?.cats, [50])
})

test('deletes an entry of every later file when the first file lists it with a dash', async (t: TestContext) => {
  const dir = fixture(t, {
    '1.txt': 'gone.example -\nnever.example -\n',
    '2.txt': 'gone.example 40\n',
    '3.txt': 'gone.example 50\nkept.example 50\n'
  })
  const { entries, report } = await mergeLayers(dir, ['1.txt', '2.txt', '3.txt'])
  t.assert.strictEqual(entries.has('gone.example'), false)
  t.assert.strictEqual(entries.has('never.example'), false)
  t.assert.deepStrictEqual([...entries.keys()], ['kept.example'])
  t.assert.strictEqual(report.layers[0]!.deletions, 2)
})

test('does not let a dash in a later file delete an entry of an earlier file', async (t: TestContext) => {
  const dir = fixture(t, { '1.txt': 'a.example 40\n', '2.txt': 'a.example -\n', '3.txt': 'a.example 50\n' })
  const { entries } = await mergeLayers(dir, ['1.txt', '2.txt', '3.txt'])
  t.assert.deepStrictEqual(entries.get('a.example')?.cats, [40])
  const only23 = await mergeLayers(dir, ['2.txt', '3.txt'])
  t.assert.strictEqual(only23.entries.has('a.example'), false)
})

test('deletes only the exact key, not its subdomains', async (t: TestContext) => {
  const dir = fixture(t, { '1.txt': 'example.com -\n', '2.txt': 'example.com 40\nwww.example.com 40\n' })
  const { entries } = await mergeLayers(dir, ['1.txt', '2.txt'])
  t.assert.deepStrictEqual([...entries.keys()], ['www.example.com'])
})

test('counts entries, deletions, URL entries, errors and categories per layer', async (t: TestContext) => {
  const dir = fixture(t, { '1.txt': 'a.example 40,41\nb.example -\nbad\n', '2.txt': 'c.example/x 40\nd.example 50\n' })
  const report = createLayersReport(10)
  const seen: string[] = []
  await collect(readLayers(dir, ['1.txt', '2.txt'], { report, onLayer: (s) => seen.push(s.file) }))
  t.assert.deepStrictEqual(seen, ['2.txt', '1.txt'])
  const [l1, l2] = report.layers
  t.assert.deepStrictEqual([l1!.entries, l1!.deletions, l1!.errors, l1!.urlEntries], [1, 1, 1, 0])
  t.assert.deepStrictEqual([l2!.entries, l2!.deletions, l2!.errors, l2!.urlEntries], [2, 0, 0, 1])
  t.assert.deepStrictEqual(
    [...l1!.perCategory],
    [
      [40, 1],
      [41, 1]
    ]
  )
  t.assert.strictEqual(report.errorCount, 1)
  t.assert.strictEqual(report.errors[0]!.file, '1.txt')
  t.assert.strictEqual(report.errors[0]!.line, 3)
})

test('rejects when a configured data file does not exist', async (t: TestContext) => {
  const dir = fixture(t, {})
  await t.assert.rejects(collect(readLayers(dir, ['missing.txt'])), { code: 'ENOENT' })
})

test('the shipped demo data file parses without errors against the shipped taxonomy', async (t: TestContext) => {
  const conf = fileURLToPath(new URL('../../../conf/', import.meta.url))
  const taxonomy = loadTaxonomy(conf, 'en')
  const { entries, report } = await mergeLayers(join(conf, 'demo-data'), ['demo.txt'], {
    isKnownCategory: (n) => taxonomy.has(n)
  })
  t.assert.strictEqual(report.errorCount, 0, report.errorLog.format())
  t.assert.ok(entries.size >= 30)
  t.assert.deepStrictEqual(entries.get('xn--e1ajeds9e.xn--p1ai')?.cats, [85])
  t.assert.strictEqual(entries.get('news.example/Casino-Promo/')?.isUrl, true)
})
