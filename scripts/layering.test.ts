// The layering rules of eslint.config.js (docs/architecture.md, Layout) catch what they are for:
// each case lints one import line as if it stood in a file of the named folder.
import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ESLint, type Linter } from 'eslint'
import tseslint from 'typescript-eslint'

const root = fileURLToPath(new URL('../../', import.meta.url))

async function restricted(filePath: string, code: string): Promise<string[]> {
  const config = (await import(new URL('eslint.config.js', `file://${root}`).href)) as { layering: Linter.Config[] }
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...config.layering]
  })
  const [result] = await eslint.lintText(code, { filePath })
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`)
}

const forbidden: Array<[string, string]> = [
  ['engine/metrics/x.test.ts', "import { ask } from '../../dns/testing/harness.js'"],
  ['engine/stats/x.ts', "import { startRole } from '../../api/role.js'"],
  ['engine/role.ts', "import type { Foo } from '../blockpage/server.js'"],
  ['engine/stats/x.ts', "import { startDnsServer } from '../../dns/server.js'"],
  ['engine/pool/x.ts', "import { x } from '../../dns/dispatch.js'"],
  ['dns/x.ts', "import { Limiter } from '../catapi/limiter.js'"],
  ['collector/x.ts', "import { startRole } from '../local/role.js'"],
  ['collector/x.ts', "export * from '../api/errors.js'"],
  ['collector/x.ts', "import { run } from '../tools/build-db.js'"],
  ['blockpage/x.ts', "import { x } from '../api/front-door.js'"],
  ['local/testing/x.ts', "import { x } from '../../bench/common/load.js'"],
  ['engine/stats/x.test.ts', "import { setup } from '../../local/testing/harness.js'"],
  ['engine/stats/x.test.ts', "import { x } from '../../dns/server.js'"],
  ['api/x.ts', "import { t } from '../ui/src/i18n.js'"],
  ['api/x.test.ts', "import { t } from '../ui/src/i18n.js'"],
  ['ui/src/pages/x.ts', "import type { UserRecord } from '../../../engine/store/index.js'"],
  ['ui/src/x.ts', "import { ROUTES } from '../../api/routes/index.js'"],
  // The engine's floors: nothing imports a floor above it, nor another wing of its floor.
  ['engine/config/x.ts', "import { parseDnstapTarget } from '../dnstap/target.js'"],
  ['engine/metrics/x.ts', "import type { Store } from '../store/index.js'"],
  ['engine/schedule/x.ts', "import { ReportTime } from '../stats/time.js'"],
  ['engine/lists/x.ts', "import { ALLOW_ONLY } from '../policy/index.js'"],
  ['engine/policy/x.ts', "import { ReportTime } from '../stats/time.js'"],
  ['engine/stats/x.ts', "import { createPolicy } from '../policy/index.js'"],
  ['engine/store/x.ts', "import { follow } from '../replica/follower.js'"]
]
const allowed: Array<[string, string]> = [
  ['blockpage/x.ts', "import { createHttpServer } from '../engine/http/index.js'"],
  ['blockpage/x.ts', "import { createFrontDoor } from './front-door.js'"],
  ['dns/x.ts', "import { JudgePool } from '../engine/pool/index.js'"],
  ['engine/stats/x.ts', "import { Store } from '../store/index.js'"],
  ['tools/x.ts', "import { startRole } from '../api/role.js'"],
  ['blockpage/x.test.ts', "import { startApi } from '../api/testing/fixtures.js'"],
  ['bench/x.ts', "import { startRole } from '../api/role.js'"],
  ['ui/src/pages/x.ts', "import { h } from '../dom.js'"],
  ['engine/schedule/x.ts', "import { WallTime } from '../time/index.js'"],
  ['engine/replica/x.ts', "import { StatsDb } from '../stats/index.js'"],
  ['engine/policy/x.ts', "import { CategoryDb } from '../catdb/index.js'"],
  ['engine/features.ts', "import { configSourceProblems } from './lists/index.js'"],
  // Tests may reach across floors: they set up whatever the code under test needs.
  ['engine/config/x.test.ts', "import { parseConfig } from '../features.js'"],
  // A folder's own files import each other directly; tests, testing/ folders and benchmarks may reach
  // behind a face.
  ['engine/stats/x.ts', "import { metaGet } from './db.js'"],
  ['api/x.test.ts', "import { metaGet } from '../engine/stats/db.js'"],
  ['engine/testing/stats/x.ts', "import { writeLocal } from '../../store/writer.js'"],
  ['engine/replica/x.test.ts', "import { metaGet } from '../stats/db.js'"],
  ['bench/x.ts', "import { metaGet } from '../engine/stats/db.js'"]
]

// Faces: product code of the engine, the roles and the CLI imports another engine folder through its
// index.js only.
const behindFace: Array<[string, string]> = [
  ['engine/replica/x.ts', "import { StatsDb } from '../stats/db.js'"],
  ['engine/features.ts', "import { configSourceProblems } from './lists/config.js'"],
  ['api/x.ts', "import { CLOSED_RE } from '../engine/stats/files.js'"],
  ['api/routes/x.ts', "export type { StatsDb } from '../../engine/stats/db.js'"],
  ['tools/x.ts', "import { writeLocal } from '../engine/store/writer.js'"],
  ['dns/upstream/x.ts', "import { ResolverSnapshot } from '../../engine/metrics/dns.js'"]
]

for (const [file, line] of forbidden) {
  test(`lint refuses in ${file}: ${line}`, async (t: TestContext) => {
    const messages = await restricted(file, line)
    t.assert.strictEqual(messages.length, 1, messages.join('\n'))
    t.assert.match(messages[0]!, /^no-restricted-imports: .*must not import/)
  })
}
for (const [file, line] of behindFace) {
  test(`lint sends through the face in ${file}: ${line}`, async (t: TestContext) => {
    const messages = await restricted(file, line)
    t.assert.strictEqual(messages.length, 1, messages.join('\n'))
    t.assert.match(messages[0]!, /^no-restricted-imports: .*through its face only: engine\/[a-z-]+\/index\.js/)
  })
}
for (const [file, line] of allowed) {
  test(`lint allows in ${file}: ${line}`, async (t: TestContext) => {
    t.assert.deepStrictEqual(await restricted(file, line), [])
  })
}
