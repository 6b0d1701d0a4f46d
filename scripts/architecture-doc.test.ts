// docs/architecture.md against the lint's tables (eslint.config.js) and the folders on disk, so the page
// cannot go stale: the engine floors table is the lint's, every role and engine folder has its entry.
import { test, type TestContext } from 'node:test'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ROLE_NAMES } from '../engine/config/roles.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const page = readFileSync(`${root}docs/architecture.md`, 'utf8')

interface Floor {
  floor: string
  wings: Record<string, string[]>
}

function section(title: string): string {
  const start = page.indexOf(`### ${title}\n`)
  if (start < 0) throw new Error(`docs/architecture.md has no section "${title}"`)
  const end = page.indexOf('\n#', start + 4)
  return page.slice(start, end < 0 ? undefined : end)
}

/** The rows of the first table in `text`, as cells. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2)
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim())
    )
}

test('the engine floors table of docs/architecture.md is the lint table ENGINE_FLOORS', async (t: TestContext) => {
  const config = (await import(new URL('eslint.config.js', `file://${root}`).href)) as { ENGINE_FLOORS: Floor[] }
  const fromLint = config.ENGINE_FLOORS.flatMap(({ floor, wings }) =>
    Object.entries(wings).map(([wing, folders]) => [floor, wing, folders.map((f) => `\`${f}\``).join(', ')])
  )
  t.assert.deepStrictEqual(tableRows(section('Engine floors')), fromLint)
})

test('every engine folder and every role is described in the Layout table', (t: TestContext) => {
  const layout = page.slice(page.indexOf('## Layout\n'), page.indexOf('### Layering, enforced'))
  const engineRow = layout.split('\n').find((l) => l.startsWith('| `engine/`')) ?? ''
  const folders = readdirSync(`${root}engine`, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
  const missing = folders.filter((f) => !engineRow.includes(`\`${f}/\``))
  t.assert.deepStrictEqual(missing, [], 'engine folders the Layout table does not name')
  const roleRows = layout.split('\n').filter((l) => l.startsWith('| `'))
  const roles = ROLE_NAMES.filter((r) => !roleRows.some((l) => l.split('|')[1]?.includes(`\`${r}/\``)))
  t.assert.deepStrictEqual(roles, [], 'roles without a row in the Layout table')
})
