import { test, type TestContext } from 'node:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadTaxonomy, CATGROUPS_FILE, CATEGORY_META_FILE } from './taxonomy.js'
import { CATEGORY } from './well-known.js'
import { tempDir } from '../testing/temp.js'

// Tests run from dist/engine/categories/; the shipped files live in the repository's conf/.
const CONF = fileURLToPath(new URL('../../../conf/', import.meta.url))

/**
 * Every category ever published, with its English name. Numbers never change: a category may be
 * renamed (edit the name here too, in the same commit) or retired, but its number is never reused.
 * Add new categories at the end of this list.
 */
const FROZEN: ReadonlyArray<readonly [number, string]> = [
  [1, 'Pornography'],
  [2, 'Erotica and nudity'],
  [3, 'Escort and sex services'],
  [4, 'Lingerie and swimwear'],
  [5, 'Sex education'],
  [10, 'Malware'],
  [11, 'Phishing'],
  [12, 'Botnets and command-and-control'],
  [13, 'Cryptojacking'],
  [14, 'Fraud and scams'],
  [15, 'Stalkerware and spyware'],
  [16, 'DDoS services'],
  [17, 'Hacking'],
  [20, 'Proxies and anonymizers'],
  [21, 'VPN services'],
  [22, 'DNS-over-HTTPS resolvers'],
  [23, 'Residential proxies'],
  [24, 'Remote access'],
  [25, 'Dynamic DNS'],
  [26, 'URL shorteners'],
  [30, 'Gambling'],
  [31, 'Drugs'],
  [32, 'Alcohol and tobacco'],
  [33, 'Violence and aggression'],
  [34, 'Weapons'],
  [35, 'Extremism and hate'],
  [36, 'Sects and cults'],
  [37, 'Suicide and self-harm'],
  [38, 'Academic cheating'],
  [39, 'Fake news'],
  [40, 'Social networks'],
  [41, 'Messengers'],
  [42, 'Chats'],
  [43, 'Forums'],
  [44, 'Blogs'],
  [45, 'Dating'],
  [46, 'Webmail'],
  [50, 'Video streaming'],
  [51, 'Music and radio'],
  [52, 'Games'],
  [53, 'Anime and manga'],
  [54, 'Celebrities'],
  [55, 'Sports'],
  [56, 'Astrology and esoterics'],
  [60, 'Torrents and P2P'],
  [61, 'Piracy and warez'],
  [62, 'File hosting'],
  [63, 'Software downloads'],
  [70, 'Advertising'],
  [71, 'Trackers and analytics'],
  [72, 'Marketingware'],
  [80, 'Search engines'],
  [81, 'News and media'],
  [82, 'Reference and encyclopedias'],
  [83, 'Education'],
  [84, 'Kids'],
  [85, 'Government'],
  [86, 'Translation'],
  [87, 'AI assistants'],
  [88, 'Web hosting'],
  [89, 'Job search'],
  [90, 'Shopping'],
  [91, 'Banking'],
  [92, 'Finance and investing'],
  [93, 'Cryptocurrencies'],
  [94, 'Mobile phones'],
  [100, 'Software updates'],
  [101, 'Antivirus and security software'],
  [102, 'Religion'],
  [0, 'Non-Existing Domain']
]

function structure(file: string): Array<[number, number[]]> {
  const raw = JSON.parse(readFileSync(join(CONF, file), 'utf8')) as Array<Record<string, Record<string, string>>>
  return raw.map((g, i) => [i, Object.keys(Object.values(g)[0]!).map(Number)])
}

test('the Russian and English files have the same groups in the same order with the same numbers', (t: TestContext) => {
  t.assert.deepStrictEqual(structure(CATGROUPS_FILE.ru), structure(CATGROUPS_FILE.en))
})

test('the flag file covers exactly the categories of the taxonomy', (t: TestContext) => {
  const meta = JSON.parse(readFileSync(join(CONF, CATEGORY_META_FILE), 'utf8')) as {
    categories: Record<string, unknown>
  }
  const flagged = Object.keys(meta.categories)
    .map(Number)
    .sort((a, b) => a - b)
  t.assert.deepStrictEqual(flagged, [...loadTaxonomy(CONF, 'en').numbers])
})

test('no category number ever changes its meaning', (t: TestContext) => {
  const en = loadTaxonomy(CONF, 'en')
  for (const [n, name] of FROZEN) t.assert.strictEqual(en.name(n), name, `category ${n}`)
  t.assert.deepStrictEqual(
    [...en.numbers],
    FROZEN.map(([n]) => n).sort((a, b) => a - b),
    'a category was added or removed without updating the frozen list'
  )
})

test('names category 0 Non-Existing Domain in both languages and does not flag it bad', (t: TestContext) => {
  const en = loadTaxonomy(CONF, 'en')
  const ru = loadTaxonomy(CONF, 'ru')
  t.assert.strictEqual(en.name(0), 'Non-Existing Domain')
  t.assert.ok((ru.name(0) ?? '').length > 0)
  t.assert.strictEqual(en.isBad(0), false)
})

test('flags the adult and security categories bad and ordinary ones not', (t: TestContext) => {
  const en = loadTaxonomy(CONF, 'en')
  for (const n of [
    CATEGORY.PORNOGRAPHY,
    CATEGORY.MALWARE,
    CATEGORY.PHISHING,
    CATEGORY.BOTNETS,
    CATEGORY.CRYPTOJACKING
  ]) {
    t.assert.strictEqual(en.isBad(n), true, String(n))
  }
  for (const n of [CATEGORY.SEARCH_ENGINES, CATEGORY.SOCIAL_NETWORKS, CATEGORY.GAMBLING, CATEGORY.ADVERTISING]) {
    t.assert.strictEqual(en.isBad(n), false, String(n))
  }
  t.assert.strictEqual(en.isBad(9999), false)
})

test('the well-known constants point at the categories they are named after', (t: TestContext) => {
  const en = loadTaxonomy(CONF, 'en')
  t.assert.strictEqual(en.name(CATEGORY.SEARCH_ENGINES), 'Search engines')
  t.assert.strictEqual(en.name(CATEGORY.VIDEO_STREAMING), 'Video streaming')
  t.assert.strictEqual(en.name(CATEGORY.SOCIAL_NETWORKS), 'Social networks')
  t.assert.strictEqual(en.name(CATEGORY.GAMBLING), 'Gambling')
  t.assert.strictEqual(en.name(CATEGORY.ADVERTISING), 'Advertising')
  for (const n of Object.values(CATEGORY)) t.assert.ok(en.has(n), `CATEGORY value ${n} is not in the taxonomy`)
})

test('serves groups in the spec format and as management API records', (t: TestContext) => {
  const ru = loadTaxonomy(CONF, 'ru')
  const raw = JSON.parse(readFileSync(join(CONF, CATGROUPS_FILE.ru), 'utf8')) as unknown
  t.assert.deepStrictEqual(JSON.parse(JSON.stringify(ru.groups)), raw)
  t.assert.strictEqual(ru.groupRecords.length, ru.groups.length)
  const first = ru.groupRecords[0]!
  t.assert.deepStrictEqual(first.categories, Object.values(ru.groups[0]!)[0])
  t.assert.strictEqual(Object.keys(ru.categories).length, ru.numbers.length)
  t.assert.strictEqual(ru.groupOf(CATEGORY.MALWARE), ru.groupOf(CATEGORY.PHISHING))
  t.assert.ok(Object.isFrozen(ru) && Object.isFrozen(ru.groups) && Object.isFrozen(first.categories))
})

function withFiles(t: TestContext, groups: string, meta: string): string {
  const dir = tempDir(t, 'taxonomy-')
  writeFileSync(join(dir, CATGROUPS_FILE.en), groups)
  writeFileSync(join(dir, CATEGORY_META_FILE), meta)
  return dir
}

const META_OK = '{"categories":{"0":{"bad":false},"1":{"bad":true}}}'

test('rejects a group element with two keys, naming the file and the element', (t: TestContext) => {
  const dir = withFiles(t, '[{"A":{"1":"x"},"B":{"0":"y"}}]', META_OK)
  t.assert.throws(
    () => loadTaxonomy(dir, 'en'),
    (err: Error & { code?: string }) =>
      err.code === 'ENGINE_TAXONOMY_INVALID' && err.message.includes(CATGROUPS_FILE.en) && err.message.includes('/0')
  )
})

test('rejects a non-numeric or repeated category number, naming the key', (t: TestContext) => {
  const a = withFiles(t, '[{"A":{"1":"x","01":"y"}},{"S":{"0":"n"}}]', META_OK)
  t.assert.throws(() => loadTaxonomy(a, 'en'), /\/0\/A\/01 is not a category number/)
  const b = withFiles(t, '[{"A":{"1":"x"}},{"B":{"1":"y","0":"n"}}]', META_OK)
  t.assert.throws(() => loadTaxonomy(b, 'en'), /repeats category 1/)
})

test('rejects a flag file that misses or adds a category', (t: TestContext) => {
  const a = withFiles(t, '[{"A":{"1":"x","2":"z"}},{"S":{"0":"n"}}]', META_OK)
  t.assert.throws(
    () => loadTaxonomy(a, 'en'),
    (err: Error) => err.message.includes(CATEGORY_META_FILE) && err.message.includes('/categories/2 is missing')
  )
  const b = withFiles(
    t,
    '[{"A":{"1":"x"}},{"S":{"0":"n"}}]',
    '{"categories":{"0":{"bad":false},"1":{"bad":true},"3":{"bad":false}}}'
  )
  t.assert.throws(() => loadTaxonomy(b, 'en'), /\/categories\/3 is not a category/)
  const c = withFiles(t, '[{"A":{"1":"x"}},{"S":{"0":"n"}}]', '{"categories":{"0":{"bad":false},"1":{"bad":"yes"}}}')
  t.assert.throws(() => loadTaxonomy(c, 'en'), /\/categories\/1 must be an object with a boolean "bad"/)
})

test('rejects a taxonomy without category 0 and a missing file', (t: TestContext) => {
  const a = withFiles(t, '[{"A":{"1":"x"}}]', '{"categories":{"1":{"bad":true}}}')
  t.assert.throws(() => loadTaxonomy(a, 'en'), /must name category 0/)
  t.assert.throws(
    () => loadTaxonomy(a, 'ru'),
    (err: Error) => err.message.includes(CATGROUPS_FILE.ru) && err.message.includes('cannot read')
  )
})
