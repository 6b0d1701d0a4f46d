import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { laneFiles, missingPortability } from './test-lanes.js'

const dist = fileURLToPath(new URL('../', import.meta.url))

function compiledTests(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...compiledTests(path))
    else if (entry.name.endsWith('.test.js')) out.push(path)
  }
  return out
}

const all = compiledTests(dist)

test('the fast and system lanes split the suite: every test in exactly one, so npm test runs each once', () => {
  const fast = laneFiles('fast', all, dist)
  const system = laneFiles('system', all, dist)
  assert.equal(fast.length + system.length, all.length)
  assert.deepEqual(new Set([...fast, ...system]), new Set(all))
  assert.ok(fast.length > 0 && system.length > 0)
})

test('a test that starts daemons, directly or through its testing/ helpers, is a system test', () => {
  const system = new Set(laneFiles('system', all, dist))
  // Starts Chromium through playwright-core.
  assert.ok(system.has(join(dist, 'blockpage/browser.test.js')))
  // Starts the dns daemon through engine/testing/daemon.js.
  assert.ok(system.has(join(dist, 'dns/reload.test.js')))
  // Starts BIND, Unbound and Knot through rpz/testing/.
  assert.ok(system.has(join(dist, 'rpz/interop.test.js')))
  const fast = new Set(laneFiles('fast', all, dist))
  assert.ok(fast.has(join(dist, 'engine/wire/query.test.js')))
  assert.ok(fast.has(join(dist, 'engine/policy/policy.test.js')))
})

test('the portability lane names tests that exist', () => {
  assert.deepEqual(missingPortability(all, dist), [])
  assert.ok(laneFiles('portability', all, dist).length >= 10)
})
