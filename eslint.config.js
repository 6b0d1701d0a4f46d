// ESLint flat config: typescript-eslint's recommended type-checked rules (tuned to the code as it
// is, see "Tuned" below) plus the layering of docs/architecture.md, encoded as
// no-restricted-imports rules generated from one table of folders:
//   engine/ imports no role; a role imports engine/ and itself only; tools/ (the CLI) may import
//   every role; bench/ and scripts/ may import anything; nothing but bench/ and scripts/ imports
//   ui/ (the console, a browser bundle), and ui/ imports nothing outside itself.
// A role's tests may cross where its production code may not: they may start another role or run
// the CLI (end-to-end). Engine tests, like the engine, import no role.
import { readdirSync, readFileSync } from 'node:fs'
import ts from 'typescript'
import tseslint from 'typescript-eslint'

/**
 * The roles come from their one list, engine/config/roles.ts. Lint runs before the build (.ci/run),
 * so the file is transpiled here and imported from memory; it imports nothing, so that works.
 */
const rolesSource = readFileSync(new URL('./engine/config/roles.ts', import.meta.url), 'utf8')
const rolesJs = ts.transpileModule(rolesSource, {
  compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
}).outputText
const { ROLE_NAMES } = await import('data:text/javascript,' + encodeURIComponent(rolesJs))

/** Each role and the folders that hold it: each role lives in the folder of its name. */
const ROLES = Object.fromEntries(ROLE_NAMES.map((role) => [role, [role]]))
const ROLE_FOLDERS = Object.values(ROLES).flat()
const SOURCE_ROOTS = ['engine', ...new Set(ROLE_FOLDERS.map((f) => f.split('/')[0])), 'tools', 'ui', 'bench', 'scripts']

/** The unit a folder belongs to: a role name, 'engine', 'tools', 'ui', 'bench' or 'scripts'. */
function unitOf(dir) {
  for (const [role, folders] of Object.entries(ROLES)) {
    if (folders.some((f) => dir === f || dir.startsWith(f + '/'))) return role
  }
  return dir.split('/')[0]
}

/**
 * The folders a unit's code must not import. `test` is true for test code: `*.test.ts`,
 * `*.case.ts` and everything under a `testing/` folder.
 */
function forbiddenFor(unit, test) {
  const roleFolders = (own) => ROLE_FOLDERS.filter((f) => !own.includes(f))
  const always = ['ui', 'bench', 'scripts']
  if (unit === 'engine') return [...ROLE_FOLDERS, 'tools', ...always]
  if (unit in ROLES) return test ? always : [...roleFolders(ROLES[unit]), 'tools', ...always]
  if (unit === 'tools') return always
  // The console runs in a browser: it reaches the roles over HTTP only.
  if (unit === 'ui') return ['engine', ...ROLE_FOLDERS, 'tools', 'bench', 'scripts']
  return [] // bench, scripts
}

/**
 * The engine's floors, from the ground up. A floor's folders may import the floors below and their own
 * floor's wing; never a floor above, nor another wing of their floor (policy and the statistics stand
 * side by side and know nothing of each other). Files directly in engine/ (errors.ts, the role
 * contract, the features list) stand outside the floors. A new engine folder must be given a floor
 * here: lint refuses to run until it is.
 */
export const ENGINE_FLOORS = [
  {
    floor: 'core',
    wings: {
      core: [
        'config',
        'wire',
        'names',
        'net',
        'log',
        'http',
        'tls',
        'health',
        'metrics',
        'cpu-priority',
        'udp',
        'time',
        'categories',
        'upstream-stub'
      ]
    }
  },
  {
    floor: 'data',
    wings: {
      data: [
        'store',
        'catdb',
        'whitelist',
        'datafiles',
        'lists',
        'schedule',
        'rpz-zones',
        'rpz-feeds',
        'dnstap',
        'querylog',
        'auth',
        'verdict'
      ]
    }
  },
  { floor: 'decide and warehouse', wings: { decide: ['policy', 'judge', 'pool'], warehouse: ['stats', 'clickhouse'] } },
  { floor: 'shared store', wings: { 'shared store': ['replica'] } }
]

/** An engine folder's place: its floor's index and its wing, or undefined for files at engine/'s root. */
function engineFloorOf(folder) {
  for (const [level, { wings }] of ENGINE_FLOORS.entries()) {
    for (const [wing, folders] of Object.entries(wings)) if (folders.includes(folder)) return { level, wing }
  }
  return undefined
}

for (const e of readdirSync('engine', { withFileTypes: true })) {
  if (e.isDirectory() && e.name !== 'testing' && engineFloorOf(e.name) === undefined)
    throw new Error(`eslint.config.js: engine/${e.name}/ has no floor in ENGINE_FLOORS`)
}

/** The engine folders that product code of engine folder `dir` must not import, with why. */
function engineForbidden(dir) {
  const own = engineFloorOf(dir.split('/')[1] ?? '')
  if (own === undefined) return []
  const out = []
  for (const [level, { floor, wings }] of ENGINE_FLOORS.entries()) {
    for (const [wing, folders] of Object.entries(wings)) {
      const above = level > own.level
      const beside = level === own.level && wing !== own.wing
      if (!above && !beside) continue
      for (const f of folders)
        out.push({
          folder: `engine/${f}`,
          why: above ? `a floor above (${floor})` : `another wing of its floor (${wing})`
        })
    }
  }
  return out
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Every engine folder but the shared test helpers has a face, its `index.ts`: the one file the code
 * of another folder imports it through (docs/architecture.md, Faces). The folder's own files import
 * each other directly; tests and `testing/` folders may reach behind a face, as they reach across
 * floors.
 */
const ENGINE_FACED = readdirSync('engine', { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== 'testing')
  .map((e) => e.name)
for (const folder of ENGINE_FACED) {
  try {
    readFileSync(`engine/${folder}/index.ts`)
  } catch {
    throw new Error(`eslint.config.js: engine/${folder}/ has no face (index.ts)`)
  }
}

/**
 * Every spelling of a relative import from `dir` that lands in `folder`: `./sub` when the folder
 * is below, then `../` once per level up to each common ancestor (`../dns`, `../../engine/dns`).
 */
function spellings(dir, folder) {
  const d = dir.split('/')
  const f = folder.split('/')
  const out = []
  for (let up = 0; up <= d.length; up++) {
    const ancestor = d.slice(0, d.length - up)
    if (!ancestor.every((s, i) => f[i] === s) || f.length <= ancestor.length) continue
    out.push((up === 0 ? './' : '../'.repeat(up)) + f.slice(ancestor.length).join('/'))
  }
  return out
}

function restrictedImports(dir, test) {
  const unit = unitOf(dir)
  const patterns = forbiddenFor(unit, test)
    .filter((folder) => unitOf(folder) !== unit)
    .map((folder) => {
      return {
        regex: `^(${spellings(dir, folder).map(escape).join('|')})(/|$)`,
        message: `${dir}/ is ${unit === 'engine' || unit in ROLES ? `the ${unit}` : unit} ${test ? 'test code' : 'code'} and must not import ${folder}/ (docs/architecture.md, Layout).`
      }
    })
  if (unit === 'engine' && !test && !dir.split('/').includes('testing')) {
    for (const { folder, why } of engineForbidden(dir)) {
      patterns.push({
        regex: `^(${spellings(dir, folder).map(escape).join('|')})(/|$)`,
        message: `${dir}/ must not import ${folder}/: ${why} (docs/architecture.md, Engine floors).`
      })
    }
  }
  // Product code of the engine, the roles and the CLI reaches another engine folder through its face
  // only; a folder it may not import at all is refused above, once.
  if (!test && (unit === 'engine' || unit in ROLES || unit === 'tools')) {
    const own = dir.split('/')[0] === 'engine' ? dir.split('/')[1] : undefined
    const refused = new Set(forbiddenFor(unit, test).concat(engineForbidden(dir).map((f) => f.folder)))
    for (const face of ENGINE_FACED) {
      const folder = `engine/${face}`
      if (face === own || refused.has(folder)) continue
      patterns.push({
        regex: `^(${spellings(dir, folder).map(escape).join('|')})/(?!index\\.js$)`,
        message: `${dir}/ imports ${folder}/ through its face only: ${folder}/index.js (docs/architecture.md, Faces).`
      })
    }
  }
  return patterns.length === 0 ? 'off' : ['error', { patterns }]
}

/** Every folder below the source roots that holds code. */
function sourceDirs() {
  const dirs = []
  const walk = (dir) => {
    dirs.push(dir)
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(`${dir}/${e.name}`)
  }
  for (const root of SOURCE_ROOTS) {
    try {
      walk(root)
    } catch (err) {
      if (err.code !== 'ENOENT') throw err
    }
  }
  return dirs
}

const TEST_FILES = ['*.test.ts', '*.case.ts']
export const layering = sourceDirs().flatMap((dir) => {
  const inTesting = dir.split('/').includes('testing')
  return [
    {
      files: [`${dir}/*.ts`],
      ignores: inTesting ? [] : TEST_FILES.map((p) => `${dir}/${p}`),
      rules: { 'no-restricted-imports': restrictedImports(dir, inTesting) }
    },
    ...(inTesting
      ? []
      : [
          {
            files: TEST_FILES.map((p) => `${dir}/${p}`),
            rules: { 'no-restricted-imports': restrictedImports(dir, true) }
          }
        ])
  ]
})

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'var/', 'test-output/', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // node:test's test() returns a promise the runner awaits itself.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }]
        }
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Tuned: an async method that implements an interface of async methods need not await.
      '@typescript-eslint/require-await': 'off',
      // tsc's noUnusedLocals/noUnusedParameters already check this; `_x` marks a deliberate one.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }
      ],
      // Tuned: passing a caught error (typed unknown) on to a rejection is fine.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }]
    }
  },
  {
    // Tuned for tests and benchmarks: they read parsed JSON bodies and assert on them (a wrong
    // shape fails the assertion), and swap methods such as process.stdout.write to capture output.
    files: ['**/*.test.ts', '**/*.case.ts', '**/testing/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off'
    }
  },
  {
    // A dependency of product code is a static import, visible to every reader and tool; only the
    // CLI (tools/) loads roles lazily.
    files: ['engine/**/*.ts', ...ROLE_FOLDERS.map((f) => `${f}/**/*.ts`)],
    ignores: ['**/*.test.ts', '**/*.case.ts', '**/testing/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression',
          message: 'Import statically: a dynamic import hides the dependency (docs/architecture.md, Layout).'
        }
      ]
    }
  },
  ...layering
)
