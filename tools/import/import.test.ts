import { test, type TestContext } from 'node:test'
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import {
  runImport,
  EntryCollector,
  importHosts,
  importAdblock,
  importDomainList,
  importUt1,
  parseUt1Mapping
} from './index.js'
import { mergeLayers } from '../../engine/datafiles/index.js'
import { tempDir as makeDir } from '../../engine/testing/temp.js'

const tempDir = (t: TestContext): string => makeDir(t, 'import-')

function write(dir: string, rel: string, text: string): string {
  const file = join(dir, rel)
  mkdirSync(join(file, '..'), { recursive: true })
  writeFileSync(file, text)
  return file
}

function io(): { stdout: PassThrough; stderr: PassThrough; out: () => string; err: () => string } {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let o = ''
  let e = ''
  stdout.on('data', (d: Buffer) => {
    o += d.toString()
  })
  stderr.on('data', (d: Buffer) => {
    e += d.toString()
  })
  return { stdout, stderr, out: () => o, err: () => e }
}

function body(text: string): string[] {
  return text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#'))
}

test('reads hosts files, skipping localhost entries and counting invalid names', async (t: TestContext) => {
  const dir = tempDir(t)
  const file = write(
    dir,
    'hosts',
    [
      '# comment',
      '127.0.0.1 localhost',
      '::1 ip6-localhost ip6-loopback',
      '0.0.0.0 0.0.0.0',
      '0.0.0.0 Ads.Example.com # trailing',
      '127.0.0.1\ttracker.example  cdn.tracker.example',
      '0.0.0.0 bad!name.example',
      'no-address-line.example',
      ''
    ].join('\n')
  )
  const into = new EntryCollector()
  await importHosts(file, [70], into)
  t.assert.deepStrictEqual(into.sorted(), [
    ['ads.example.com', [70]],
    ['cdn.tracker.example', [70]],
    ['tracker.example', [70]]
  ])
  t.assert.deepStrictEqual(into.counts, { read: 9, skipped: 4, invalid: 2 })
})

test('imports only the simple domain rules of an AdBlock list', async (t: TestContext) => {
  const dir = tempDir(t)
  const file = write(
    dir,
    'list.txt',
    [
      '[Adblock Plus 2.0]',
      '! Title: test',
      '||ads.example^',
      '||Tracker.Example^|',
      '||ads.example/path^',
      '@@||good.example^',
      'example.com##.banner',
      '||wild*.example^',
      '||opt.example^$third-party',
      '/regex/',
      ''
    ].join('\n')
  )
  const into = new EntryCollector()
  await importAdblock(file, [70, 71], into)
  t.assert.deepStrictEqual(into.sorted(), [
    ['ads.example', [70, 71]],
    ['tracker.example', [70, 71]]
  ])
  t.assert.strictEqual(into.counts.skipped, 6)
})

test('reads a plain domain list with IDNs, wildcards and comments', async (t: TestContext) => {
  const dir = tempDir(t)
  const file = write(
    dir,
    'list.txt',
    '# list\nкремль.рф\n*.wild.example\n.dot.example\nplain.example # c\ntwo words\n\n'
  )
  const into = new EntryCollector()
  await importDomainList(file, [85], into)
  t.assert.deepStrictEqual(
    into.sorted().map(([k]) => k),
    ['dot.example', 'plain.example', 'wild.example', 'xn--e1ajeds9e.xn--p1ai']
  )
  t.assert.strictEqual(into.counts.invalid, 1)
})

test('imports a UT1 tree with urls, aliases and the union of categories for a shared name', async (t: TestContext) => {
  const dir = tempDir(t)
  write(dir, 'ut1/gambling/domains', 'casino.example\nshared.example\n')
  write(dir, 'ut1/gambling/urls', 'site.example/Casino/Page\n')
  write(dir, 'ut1/gambling/expressions', '(casino|poker)\n')
  write(dir, 'ut1/games/domains', 'shared.example\ngame.example\n')
  write(dir, 'ut1/porn/urls', 'adult.example/Videos\n') // alias without its target dir: read as adult
  write(dir, 'ut1/ads/domains', 'dup.example\n') // alias whose target exists: skipped
  write(dir, 'ut1/publicite/domains', 'ads.example\n')
  write(dir, 'ut1/liste_bu/domains', 'school.example\n')
  write(dir, 'ut1/unknown_cat/domains', 'x.example\n')
  write(dir, 'ut1/global_usage', 'NAME: gambling\n')
  const mapping = parseUt1Mapping(
    {
      aliases: { porn: 'adult', ads: 'publicite' },
      categories: { gambling: [30], games: [52], adult: [1], publicite: [70], liste_bu: [] }
    },
    'mapping.json'
  )
  const into = new EntryCollector()
  const reports = await importUt1(join(dir, 'ut1'), mapping, into)
  t.assert.deepStrictEqual(into.sorted(), [
    ['ads.example', [70]],
    ['adult.example/Videos', [1]],
    ['casino.example', [30]],
    ['game.example', [52]],
    ['shared.example', [30, 52]],
    ['site.example/Casino/Page', [30]]
  ])
  t.assert.deepStrictEqual(
    reports.map((r) => r.source),
    ['ads', 'gambling', 'games', 'liste_bu', 'porn', 'publicite', 'unknown_cat']
  )
  t.assert.strictEqual(reports.find((r) => r.source === 'gambling')!.skipped, 1)
  t.assert.match(reports.find((r) => r.source === 'unknown_cat')!.note ?? '', /not in the mapping/)
})

test('rejects a mapping that names an unknown category or alias target', (t: TestContext) => {
  t.assert.throws(
    () => parseUt1Mapping({ categories: { a: [999] } }, 'm.json', (n) => n < 100),
    /\/categories\/a names unknown category 999/
  )
  t.assert.throws(() => parseUt1Mapping({ categories: { a: [1] }, aliases: { b: 'c' } }, 'm.json'), /\/aliases\/b/)
})

test('writes a sorted, deduplicated data file that the data-file parser reads back', async (t: TestContext) => {
  const dir = tempDir(t)
  const a = write(dir, 'a.txt', 'zeta.example\nalpha.example\nAlpha.example.\n')
  const b = write(dir, 'b.txt', 'beta.example\nzeta.example\n')
  const out = join(dir, 'out.txt')
  const s = io()
  t.assert.strictEqual(await runImport(['domains', a, b, '--category', '45', '--out', out], s), 0)
  const text = readFileSync(out, 'utf8')
  t.assert.deepStrictEqual(body(text), ['alpha.example\t45', 'beta.example\t45', 'zeta.example\t45'])
  t.assert.match(s.err(), /3 written, 0 skipped, 0 invalid \(5 read\)/)
  const again = join(dir, 'again.txt')
  await runImport(['domains', a, b, '--category', '45', '--out', again], io())
  t.assert.strictEqual(readFileSync(again, 'utf8'), text)
  const { entries, report } = await mergeLayers(dir, ['out.txt'])
  t.assert.strictEqual(entries.size, 3)
  t.assert.strictEqual(report.errorCount, 0)
})

test('imports a UT1 tree from the command line with the shipped mapping', async (t: TestContext) => {
  const dir = tempDir(t)
  write(dir, 'ut1/social_networks/domains', 'social.example\n')
  write(dir, 'ut1/phishing/urls', 'login.example/Secure/Login\n')
  const s = io()
  t.assert.strictEqual(await runImport(['ut1', join(dir, 'ut1'), '--out', '-'], s), 0)
  t.assert.deepStrictEqual(body(s.out()), ['login.example/Secure/Login\t11', 'social.example\t40'])
  t.assert.match(s.out(), /CC BY-SA 4\.0/)
})

test('prints usage and exits 2 on bad arguments', async (t: TestContext) => {
  for (const argv of [
    [],
    ['hosts', 'x.txt', '--out', 'o.txt'],
    ['nope', 'x', '--out', 'o'],
    ['hosts', 'x', '--category', '0', '--out', 'o'],
    ['hosts', 'x', '--category', '9999', '--out', 'o'],
    ['domains', 'x', '--category', '40'],
    ['ut1', 'd', '--bogus']
  ]) {
    const s = io()
    t.assert.strictEqual(await runImport(argv, s), 2, argv.join(' '))
    t.assert.match(s.err(), /usage:/)
  }
})

test('exits 1 with a message when a source file is missing', async (t: TestContext) => {
  const dir = tempDir(t)
  const s = io()
  t.assert.strictEqual(
    await runImport(['hosts', join(dir, 'missing'), '--category', '70', '--out', join(dir, 'o.txt')], s),
    1
  )
  t.assert.match(s.err(), /ENOENT/)
})
