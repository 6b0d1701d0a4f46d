// The repository holds itself together: no file cites notes kept outside it, only the benchmarks reach
// outside it (for optional data), the install-script policy in package.json covers what package-lock.json
// installs, and docs that quote a shipped file quote it as shipped.
import { test, type TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from '../engine/testing/daemon.js'

const read = (path: string): string => readFileSync(join(REPO, path), 'utf8')

/** Tracked text files (a binary one, such as a screenshot, holds a NUL byte and is left out). */
function trackedTexts(): Array<{ path: string; text: string }> {
  const paths = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((p) => p !== '')
  const out: Array<{ path: string; text: string }> = []
  for (const path of paths) {
    let text: string
    try {
      text = read(path)
    } catch {
      continue // deleted in the work tree, not yet committed
    }
    if (!text.includes('\0')) out.push({ path, text })
  }
  return out
}

// Spelled in pieces, so that this file does not cite what it looks for.
// The notes by file name, and by their section numbering (the name, a space, a letter, a dot and a digit).
const OUTSIDE_NOTES = new RegExp(`\\b(${'DESIGN'}|${'STYLE'})(\\.md\\b| [A-Z]\\.\\d)`)
const OUTSIDE_FOLDER = '../' + 'shared'
/** Pages that describe the benchmarks' optional data, or state this rule; they read nothing. */
const MAY_NAME_OUTSIDE_FOLDER = new Set(['docs/performance.md', 'docs/conventions.md'])
/** Tests that run a conformance tool from there when it is present (and fail under CI when it is not). */
const MAY_RUN_OUTSIDE_TOOLS = new Set(['dns/h2/h2spec.test.ts'])

test('no tracked file cites notes kept outside the repository, and only bench/ reaches outside it', (t: TestContext) => {
  const files = trackedTexts()
  t.assert.ok(files.length > 100, `only ${files.length} tracked files found`)
  const citing = files.filter((f) => OUTSIDE_NOTES.test(f.text)).map((f) => f.path)
  t.assert.deepStrictEqual(
    citing,
    [],
    'cite notes outside the repository: say it in docs/contract.md or docs/conventions.md and point there'
  )
  const reaching = files
    .filter(
      (f) =>
        f.text.includes(OUTSIDE_FOLDER) &&
        !f.path.startsWith('bench/') &&
        !MAY_NAME_OUTSIDE_FOLDER.has(f.path) &&
        !MAY_RUN_OUTSIDE_TOOLS.has(f.path)
    )
    .map((f) => f.path)
  t.assert.deepStrictEqual(reaching, [], `only bench/ may read ${OUTSIDE_FOLDER}`)
})

const ISSUE_CITATION = new RegExp(`\\b[Ii]ssues? ?#?\\d+`)
/** Code says what a thing is and why; the tracker that asked for it is not part of the repository. */
const CODE = /\.(ts|js|c|sh|py|yaml)$/

test('no code, test or script cites an issue number', (t: TestContext) => {
  const citing = trackedTexts()
    .filter((f) => CODE.test(f.path) && !f.path.startsWith('bench/results/') && ISSUE_CITATION.test(f.text))
    .map((f) => `${f.path}: ${ISSUE_CITATION.exec(f.text)?.[0] ?? ''}`)
  t.assert.deepStrictEqual(citing, [], 'say what the code does and why, not which issue asked for it')
})

interface LockPackage {
  hasInstallScript?: boolean
  dev?: boolean
  optional?: boolean
}

test("package.json's allowScripts covers every installed package with an install script, and runs none", (t: TestContext) => {
  const pkg = JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean | string> }
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockPackage> }
  const withScripts = new Set<string>()
  for (const [path, p] of Object.entries(lock.packages)) {
    if (p.hasInstallScript === true && path !== '')
      withScripts.add(path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
  }
  t.assert.ok(withScripts.has('lmdb'), "package-lock.json lists lmdb's install script")
  const policy = pkg.allowScripts ?? {}
  // Name-only entries (npm's form for a denial): a pinned `name@version` would stop covering the next version.
  const covered = new Set(Object.keys(policy))
  t.assert.deepStrictEqual(
    [...withScripts].filter((name) => !covered.has(name)).sort(),
    [],
    'packages whose install scripts package.json does not decide: add them to allowScripts (npm install-scripts deny NAME)'
  )
  // README and docs/install.md say that no install script needs to run: the prebuilt binaries load without one.
  t.assert.deepStrictEqual(
    Object.entries(policy)
      .filter(([, allowed]) => allowed !== false)
      .map(([name]) => name),
    []
  )
  t.assert.deepStrictEqual(
    [...covered].filter((name) => !withScripts.has(name)).sort(),
    [],
    'entries for packages no longer installed'
  )
})

test('docs/metrics.md quotes the shipped logrotate file as shipped', (t: TestContext) => {
  const shipped = read('packaging/logrotate/filterd')
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n')
  const doc = read('docs/metrics.md')
  const start = doc.indexOf('```\n/var/log/filterd/')
  t.assert.ok(start >= 0, 'docs/metrics.md has no logrotate snippet')
  const quoted = doc.slice(start + 4, doc.indexOf('```', start + 4))
  t.assert.strictEqual(quoted, shipped)
})

test('constants are UPPER_SNAKE: no tracked source file declares a `kName` constant', (t: TestContext) => {
  // `kName` stays for Symbols only (docs/conventions.md, "Naming").
  const K_CONSTANT = /\bconst k[A-Z]\w*\s*(?::[^=]+)?=\s*(?!Symbol\()/
  const offending = trackedTexts()
    .filter((f) => /\.(ts|js|mjs)$/.test(f.path) && K_CONSTANT.test(f.text))
    .map((f) => f.path)
  t.assert.deepStrictEqual(offending, [], 'rename these constants to UPPER_SNAKE')
})
