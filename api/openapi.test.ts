import { test, type TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildOpenApi, renderOpenApi } from './openapi.js'
import { ADAPTER_ERRORS, API_ERRORS } from './errors.js'
import { ROUTES } from './routes/index.js'

const docs = fileURLToPath(new URL('../../docs/', import.meta.url))

test('docs/openapi.yaml is what the route table and schemas generate (npm run gen:docs)', (t: TestContext) => {
  t.assert.strictEqual(readFileSync(`${docs}openapi.yaml`, 'utf8'), renderOpenApi())
})

test('the OpenAPI document has one operation per route, with unique operation ids and every error status', (t: TestContext) => {
  const doc = buildOpenApi() as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>
  }
  const ids = new Set<string>()
  let count = 0
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      count++
      t.assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`)
      ids.add(op.operationId)
      const r = ROUTES.find((x) => x.path === path && x.method.toLowerCase() === method)!
      for (const s of [...r.ok.map((o) => o.status), ...r.errors, 500])
        t.assert.ok(String(s) in op.responses, `${method} ${path} ${s}`)
    }
  }
  t.assert.strictEqual(count, ROUTES.length)
})

test('docs/api.md lists every endpoint with its statuses, and every error code both ways', (t: TestContext) => {
  const md = readFileSync(`${docs}api.md`, 'utf8')
  for (const r of ROUTES) {
    const row = `| ${r.method} | \`${r.path}\` | ${r.ok.map((o) => o.status).join(', ')} | ${[...r.errors, 500].join(', ')} |`
    t.assert.ok(md.includes(row), `missing or outdated row: ${row}`)
  }
  const codes = { ...API_ERRORS, ...ADAPTER_ERRORS } as Record<string, number>
  const documented = new Map<string, number>()
  for (const m of md.matchAll(/^\| `((?:API|HTTP)_[A-Z_]+)` \| (\d{3}) \|/gm)) documented.set(m[1]!, Number(m[2]))
  t.assert.deepStrictEqual(Object.fromEntries([...documented].sort()), Object.fromEntries(Object.entries(codes).sort()))
})
