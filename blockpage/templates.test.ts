import { test, type TestContext } from 'node:test'
import { readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LANGUAGES } from './language.js'
import { DEFAULT_TEMPLATES_DIR, loadTemplates, PAGE_NAMES, type PageVars } from './templates.js'
import { tempDir as makeDir } from '../engine/testing/temp.js'

const tempDir = (t: TestContext): string => makeDir(t, 'filterd-templates-')

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

test('the shipped templates escape markup in every variable', (t: TestContext) => {
  const set = loadTemplates(DEFAULT_TEMPLATES_DIR, 'ru')
  const evil = '<script>alert(1)</script>'
  for (const name of ['blocked', 'blocked_by_category', 'unblocked'] as const) {
    for (const lang of ['ru', 'en'] as const) {
      const html = set.render(name, lang, {
        ...VARS,
        Domain: evil,
        DisplayDomain: evil,
        Cats: [evil],
        ProductName: evil,
        ReasonText: evil,
        RetryUrl: `javascript:"${evil}`
      })
      t.assert.doesNotMatch(html, /<script/, `${name}.${lang} let markup through`)
      t.assert.ok(html.includes('&lt;script&gt;'), `${name}.${lang} does not show the value`)
    }
  }
})

/**
 * Why `html` would make a browser fetch something from elsewhere, or undefined. A resource is anything the
 * page loads by itself: `src`/`srcset`/`data` attributes, `href` on anything but a link the user follows
 * (`<link>` stylesheets, icons, preloads), CSS `@import` and `url(…)` other than `data:`. `<a href>` is
 * navigation, not a load: the unblocked page links to the retried address on purpose.
 */
function externalResource(html: string): string | undefined {
  const withoutLinks = html.replace(/<a\s[^>]*>/gi, '<a>')
  const checks: Array<[string, RegExp]> = [
    [
      'an absolute or protocol-relative URL in src/srcset/href/data/action/poster',
      /\b(?:src|srcset|href|data|action|poster)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?\/\//i
    ],
    ['a src or srcset attribute', /\b(?:src|srcset)\s*=/i],
    ['a <link> element', /<link\b/i],
    ['a <script> element', /<script\b/i],
    ['a CSS @import', /@import\b/i],
    ['a CSS url() that is not data:', /url\(\s*["']?(?!data:)/i]
  ]
  for (const [what, re] of checks) {
    const m = re.exec(withoutLinks)
    if (m !== null) return `${what}: …${withoutLinks.slice(Math.max(0, m.index - 40), m.index + 60)}…`
  }
  return undefined
}

test('the shipped templates are self-contained: no external scripts, styles, fonts or images', (t: TestContext) => {
  const set = loadTemplates(DEFAULT_TEMPLATES_DIR, 'ru')
  const rendered = new Set<string>()
  for (const name of PAGE_NAMES) {
    for (const lang of LANGUAGES) {
      // RetryUrl is an absolute http:// URL, as in production: only its <a href> may carry it.
      const html = set.render(name, lang, { ...VARS, Lang: lang })
      const found = externalResource(html)
      t.assert.strictEqual(found, undefined, `${set.files[`${name}.${lang}`]} loads something external: ${found ?? ''}`)
      rendered.add(set.files[`${name}.${lang}`]!)
    }
  }
  // Every shipped page file was rendered (partials are checked through the pages that include them).
  const pages = readdirSync(DEFAULT_TEMPLATES_DIR)
    .filter((f) => /^[a-z].*\.html$/.test(f))
    .map((f) => join(DEFAULT_TEMPLATES_DIR, f))
  t.assert.deepStrictEqual([...rendered].sort(), pages.sort())
})

test('the self-containment check catches each kind of external resource and allows the retry link', (t: TestContext) => {
  t.assert.strictEqual(
    externalResource('<p><a class="button" href="http://casino.example/">Open</a></p><svg><path d="M0 0"/></svg>'),
    undefined
  )
  t.assert.strictEqual(externalResource('<style>body{background:url(data:image/png;base64,AAAA)}</style>'), undefined)
  for (const html of [
    '<img src="https://cdn.example/x.png">',
    '<img src="//cdn.example/x.png">',
    '<link rel="stylesheet" href="https://fonts.example/css">',
    '<link rel="icon" href="/favicon.ico">',
    '<script src="http://x.example/a.js"></script>',
    '<style>@import "https://fonts.example/css";</style>',
    '<style>body{background:url( "https://x.example/bg.png")}</style>',
    '<style>@font-face{src:url(/f.woff2)}</style>',
    '<object data="https://x.example/a.swf"></object>'
  ]) {
    t.assert.notStrictEqual(externalResource(html), undefined, html)
  }
})

test("an operator's NAME.html serves the default language and the shipped pages cover the others", (t: TestContext) => {
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
  t.assert.throws(
    () => loadTemplates(dir, 'ru'),
    (err: Error & { code?: string }) =>
      err.code === 'ENGINE_CONFIG_INVALID' && err.message.includes('blocked.html') && err.message.includes('unescaped')
  )
  writeFileSync(join(dir, 'blocked.html'), '<p>{{& Domain}}</p>')
  t.assert.throws(() => loadTemplates(dir, 'ru'), /unescaped/)
})

test('a template that does not compile stops the start with the file name', (t: TestContext) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'blocked_by_category.en.html'), '{{#each Cats}}<li>{{this}}</li>')
  t.assert.throws(
    () => loadTemplates(dir, 'ru'),
    (err: Error & { code?: string }) =>
      err.code === 'ENGINE_CONFIG_INVALID' && err.message.includes('blocked_by_category.en.html')
  )
  writeFileSync(join(dir, 'blocked_by_category.en.html'), '{{> nosuchpartial}}')
  t.assert.throws(() => loadTemplates(dir, 'ru'), /nosuchpartial/)
})

test('a missing templates directory falls back to the shipped templates and says so', (t: TestContext) => {
  const set = loadTemplates(join(tmpdir(), 'filterd-no-such-dir-' + process.pid), 'ru')
  t.assert.ok(set.missingDir, 'missingDir not set')
  t.assert.ok(set.render('blocked', 'ru', VARS).includes('Доступ к сайту ограничен'), 'shipped page not served')
})
