// The tier table (engine/stats/tiers.ts): every table name is spelt and read by it, and docs/design/statistics.md
// shows it as it is (its tier table and its failpoints table are the code's).
import { test, type TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { FAILPOINTS } from '../failpoints.js'
import { partitionsAmong } from './db.js'
import { MAINTENANCE_STEPS } from './maintenance.js'
import { foldedAmong } from './fold.js'
import { rawHoursAmong } from './raw-layout.js'
import { TIERS, tableName, tableOf, tierRows } from './tiers.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const page = readFileSync(`${root}docs/design/statistics.md`, 'utf8')

/** The rows of the first table after the heading `title`, as cells (`\|` is a pipe inside a cell). */
function tableAfter(title: string): string[][] {
  const start = page.indexOf(`## ${title}\n`)
  if (start < 0) throw new Error(`docs/design/statistics.md has no section "${title}"`)
  const end = page.indexOf('\n## ', start + 3)
  const lines = page.slice(start, end < 0 ? undefined : end).split('\n')
  const first = lines.findIndex((l) => l.startsWith('|'))
  const rows: string[][] = []
  for (const l of lines.slice(first + 2)) {
    if (!l.startsWith('|')) break
    rows.push(
      l
        .replace(/\\\|/g, '\u0000')
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replace(/\u0000/g, '|'))
    )
  }
  return rows
}

test("the design page's tier table is the code's", (t: TestContext) => {
  t.assert.deepStrictEqual(tableAfter('Tiers'), tierRows())
})

test("the design page's failpoints are the registry's", (t: TestContext) => {
  const listed = tableAfter('Failpoints').map((r) => r[0])
  t.assert.deepStrictEqual(
    listed,
    Object.keys(FAILPOINTS).map((n) => `\`${n}\``)
  )
})

test("the design page's maintenance steps are the scheduler's, in its order", (t: TestContext) => {
  const start = page.indexOf('## Maintenance after each import\n')
  const section = page.slice(start, page.indexOf('\n## ', start + 3))
  const steps = [...section.matchAll(/^\d+\. \*\*([a-z ]+)\*\*/gm)].map((m) => m[1])
  t.assert.deepStrictEqual(steps, [...MAINTENANCE_STEPS])
})

test('every table name the tier table spells, it reads back; copies being built and other tables are no tier', (t: TestContext) => {
  for (const tier of TIERS)
    for (const kind of Object.keys(tier.tables)) {
      const name = tableName(tier.name, kind as never, 19876)
      t.assert.deepStrictEqual(tableOf(name), { tier: tier.name, kind, n: 19876 })
    }
  for (const other of [
    'files',
    'meta',
    'hours_19876__c',
    'mhours_19876__build',
    'rawi_5__sorted',
    'hours_',
    'whours_x'
  ])
    t.assert.strictEqual(tableOf(other), undefined, other)
})

test('the import, the maintenance and the reports find the same partitions by the tier table', (t: TestContext) => {
  const names = [
    'rawi_10',
    'rawusers_10',
    'raw_9',
    'hours_20',
    'names_20',
    'hours_21__c',
    'whours_18',
    'mnames_1',
    'files'
  ]
  t.assert.deepStrictEqual(partitionsAmong(names), { raw: [9, 10], hours: [20], names: [20] })
  t.assert.deepStrictEqual(rawHoursAmong(names), [9, 10])
  t.assert.deepStrictEqual(
    foldedAmong(names).map((f) => [f.table, f.tier, f.kind, f.first, f.last]),
    [
      ['mnames_1', 'month', 'names', 1, 30],
      ['whours_18', 'week', 'hours', 18, 24]
    ]
  )
})
