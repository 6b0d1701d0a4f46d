import { test, type TestContext } from 'node:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_TEMPLATES_DIR, loadTemplates, type PageVars } from './templates.js'

function tempDir (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'filterd-templates-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

const VARS: PageVars = {
  Domain: 'casino.example',
  DisplayDomain: 'casino.example',
  Cats: ['Gambling'],
  ProductName: 'Filter',
  Lang: 'en',
  Reason: 'category',
  ReasonText: 'why',
  RetryUrl: 'http://casino.example/'
}

test('the shipped templates escape markup in every variable', () => {
  const set = loadTemplates(DEFAULT_TEMPLATES_DIR, 'ru')
  const evil = '<script>alert(1)</script>'
  for (const name of ['blocked', 'blocked_by_category', 'unblocked'] as const) {
    for (const lang of ['ru', 'en'] as const) {
      const html = set.render(name, lang, {
        ...VARS, Domain: evil, DisplayDomain: evil, Cats: [evil], ProductName: evil, ReasonText: evil, RetryUrl: `javascript:"${evil}`
      })
      if (html.includes('<script')) throw new Error(`${name}.${lang} let markup through`)
      if (!html.includes('&lt;script&gt;')) throw new Error(`${name}.${lang} does not show the value`)
    }
  }
})

test('the shipped templates are self-contained: no external scripts, styles, fonts or images', () => {
  const set = loadTemplates(DEFAULT_TEMPLATES_DIR, 'ru')
  for (const file of new Set(Object.values(set.files))) {
    const html = set.render('blocked_by_category', 'en', VARS)
    if (/<script|<link|@import|url\(|src=/i.test(html)) throw new Error(`${file} loads something external`)
  }
})

test('an operator\'s NAME.html serves the default language and the shipped pages cover the others', (t: TestContext) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'blocked.html'), '<p>ISP {{Domain}}</p>')
  writeFileSync(join(dir, 'blocked_by_category.html'), '<p>{{Domain}}: {{#each Cats}}[{{this}}]{{/each}}</p>')
  const set = loadTemplates(dir, 'ru')
  t.assert.strictEqual(set.render('blocked', 'ru', VARS), '<p>ISP casino.example</p>')
  t.assert.strictEqual(set.render('blocked_by_category', 'ru', VARS), '<p>casino.example: [Gambling]</p>')
  t.assert.strictEqual(set.files['blocked.en'], join(DEFAULT_TEMPLATES_DIR, 'blocked.en.html'))
  t.assert.strictEqual(set.files['unblocked.ru'], join(DEFAULT_TEMPLATES_DIR, 'unblocked.ru.html'))
  t.assert.strictEqual(set.missingDir, false)
})

test('NAME.LANG.html wins over NAME.html, and operator partials replace the shipped ones', (t: TestContext) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'blocked.html'), 'generic')
  writeFileSync(join(dir, 'blocked.en.html'), 'english {{> brand}}')
  writeFileSync(join(dir, '_brand.html'), '<b>{{ProductName}}</b>')
  writeFileSync(join(dir, '_style.html'), 'body{color:red}')
  const set = loadTemplates(dir, 'en')
  t.assert.strictEqual(set.render('blocked', 'en', VARS), 'english <b>Filter</b>')
  t.assert.match(set.render('unblocked', 'ru', VARS), /<style>body\{color:red\}<\/style>/)
})

test('unescaped output in a template is refused at load, naming the file', (t: TestContext) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'blocked.html'), '<p>{{{Domain}}}</p>')
  t.assert.throws(() => loadTemplates(dir, 'ru'), (err: Error & { code?: string }) =>
    err.code === 'ENGINE_CONFIG_INVALID' && err.message.includes('blocked.html') && err.message.includes('unescaped'))
  writeFileSync(join(dir, 'blocked.html'), '<p>{{& Domain}}</p>')
  t.assert.throws(() => loadTemplates(dir, 'ru'), /unescaped/)
})

test('a template that does not compile stops the start with the file name', (t: TestContext) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'blocked_by_category.en.html'), '{{#each Cats}}<li>{{this}}</li>')
  t.assert.throws(() => loadTemplates(dir, 'ru'), (err: Error & { code?: string }) =>
    err.code === 'ENGINE_CONFIG_INVALID' && err.message.includes('blocked_by_category.en.html'))
  writeFileSync(join(dir, 'blocked_by_category.en.html'), '{{> nosuchpartial}}')
  t.assert.throws(() => loadTemplates(dir, 'ru'), /nosuchpartial/)
})

test('a missing templates directory falls back to the shipped templates and says so', () => {
  const set = loadTemplates(join(tmpdir(), 'filterd-no-such-dir-' + process.pid), 'ru')
  if (!set.missingDir) throw new Error('missingDir not set')
  if (!set.render('blocked', 'ru', VARS).includes('Доступ к сайту ограничен')) throw new Error('shipped page not served')
})
