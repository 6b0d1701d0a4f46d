import { test, type TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createBuiltinWhitelist, BUILTIN_WHITELIST } from './builtin.js'
import { normalizeDomain, suffixesOf } from '../names/normalize.js'

const DOC = fileURLToPath(new URL('../../../docs/builtin-whitelist.md', import.meta.url))

test('matches a listed name and all of its subdomains but not look-alikes', (t: TestContext) => {
  const wl = createBuiltinWhitelist()
  t.assert.strictEqual(wl.has('windowsupdate.com'), true)
  t.assert.strictEqual(wl.has('Download.WindowsUpdate.com.'), true)
  t.assert.strictEqual(wl.has('a.b.ctldl.windowsupdate.com'), true)
  t.assert.strictEqual(wl.has('notwindowsupdate.com'), false)
  t.assert.strictEqual(wl.has('windowsupdate.com.evil.example'), false)
  t.assert.strictEqual(wl.has('apple.com'), false)
  t.assert.strictEqual(wl.has('not a name'), false)
})

test('covers antivirus, OS update and certificate revocation hosts', (t: TestContext) => {
  const wl = createBuiltinWhitelist()
  for (const name of [
    'dnl-01.geo.kaspersky.com',
    'um10.eset.com',
    'update.drweb.com',
    'definitionupdates.microsoft.com',
    'swcdn.apple.com',
    'mesu.apple.com',
    'swscan.apple.com',
    'deb.debian.org',
    'security.ubuntu.com',
    'archive.ubuntu.com',
    'r3.o.lencr.org',
    'ocsp.digicert.com'
  ]) {
    t.assert.strictEqual(wl.has(name), true, name)
  }
})

test('adds the vendor names from the config and rejects an invalid one', (t: TestContext) => {
  const wl = createBuiltinWhitelist(['Filter.ISP.example.'])
  t.assert.strictEqual(wl.has('blockpage.filter.isp.example'), true)
  t.assert.strictEqual(createBuiltinWhitelist().has('filter.isp.example'), false)
  t.assert.throws(() => createBuiltinWhitelist(['bad name']), { code: 'ENGINE_CONFIG_INVALID' })
})

test('answers per-packet checks with exact suffix keys', (t: TestContext) => {
  const wl = createBuiltinWhitelist()
  t.assert.strictEqual(wl.matchKey('lencr.org'), true)
  t.assert.strictEqual(wl.matchKey('r3.o.lencr.org'), false)
  t.assert.strictEqual(wl.matchesSuffixKeys(suffixesOf('r3.o.lencr.org')), true)
  t.assert.strictEqual(wl.matchesSuffixKeys(suffixesOf('www.example.com')), false)
})

test('lists only normalised names, each once', (t: TestContext) => {
  const all = BUILTIN_WHITELIST.flatMap((g) => g.names)
  for (const name of all) t.assert.strictEqual(normalizeDomain(name), name, name)
  t.assert.strictEqual(new Set(all).size, all.length)
})

test('docs/builtin-whitelist.md lists exactly the compiled names', (t: TestContext) => {
  const documented = new Set([...readFileSync(DOC, 'utf8').matchAll(/^- `([^`]+)`/gm)].map((m) => m[1]!))
  const compiled = new Set(BUILTIN_WHITELIST.flatMap((g) => g.names))
  t.assert.deepStrictEqual(
    [...compiled].filter((n) => !documented.has(n)),
    [],
    'compiled but not documented'
  )
  t.assert.deepStrictEqual(
    [...documented].filter((n) => !compiled.has(n)),
    [],
    'documented but not compiled'
  )
})
