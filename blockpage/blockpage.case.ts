/**
 * The block page's HTTP behaviour, run against both HTTP implementations (blockpage-uws.test.ts,
 * blockpage-node.test.ts), as the adapter's own suite is (hono's common.case idea).
 */
import { test, type TestContext } from 'node:test'
import type { HttpImpl } from '../engine/http/index.js'
import { ALICE, ANON, BOB, CAROL, get, startFixture, visibleText, type Answer } from './testing/fixture.js'

function assertNoStore(t: TestContext, a: Answer): void {
  t.assert.strictEqual(a.headers['cache-control'], 'no-store')
}

function assertHtml(t: TestContext, a: Answer): void {
  t.assert.strictEqual(a.status, 200)
  t.assert.strictEqual(a.headers['content-type'], 'text/html; charset=utf-8')
  assertNoStore(t, a)
}

export function runBlockPageSuite(impl: HttpImpl): void {
  const opts = { impl }

  test(`[${impl}] a category block shows blocked_by_category with the domain and the category names in Russian by default`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const a = await get(bp.port, { host: 'www.Casino.Example:8080', from: ANON })
    assertHtml(t, a)
    const text = visibleText(a.body)
    t.assert.match(text, /Доступ к сайту ограничен/)
    t.assert.match(text, /www\.casino\.example/)
    t.assert.match(text, /Категория Азартные игры/)
    t.assert.match(a.body, /<html lang="ru">/)
    t.assert.match(text, /Test Filter/)
  })

  test(`[${impl}] Cats lists every blocking category in English when the browser asks for English`, async (t: TestContext) => {
    const { bp, store } = await startFixture(t, opts)
    await store.write((w) => {
      w.putUser({ ...w.store.getUser('alice')!, filter: [30, 40] })
    })
    const a = await get(bp.port, { host: 'mixed.example', from: ALICE, acceptLanguage: 'en-US,en;q=0.9' })
    assertHtml(t, a)
    const text = visibleText(a.body)
    t.assert.match(text, /Access to this site is restricted/)
    t.assert.match(text, /Categories Gambling Social networks/)
    t.assert.match(a.body, /<html lang="en">/)
  })

  test(`[${impl}] a user blacklist entry shows blocked.html without categories`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const a = await get(bp.port, { host: 'a.user-listed.example', from: ALICE, acceptLanguage: 'en' })
    assertHtml(t, a)
    const text = visibleText(a.body)
    t.assert.match(text, /The site a\.user-listed\.example is blocked\./)
    t.assert.match(text, /block list of your account/)
    t.assert.doesNotMatch(a.body, /class="cats"/)
  })

  test(`[${impl}] a global blacklist entry and allow-only mode show blocked.html with their own reason`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const global = await get(bp.port, { host: 'global-listed.example', from: ALICE, acceptLanguage: 'en' })
    assertHtml(t, global)
    t.assert.match(visibleText(global.body), /blocked by your provider for all customers/)
    const allowOnly = await get(bp.port, { host: 'anything.example', from: BOB, acceptLanguage: 'en' })
    assertHtml(t, allowOnly)
    t.assert.match(
      visibleText(allowOnly.body),
      /The site anything\.example is blocked\. Your account allows only the sites on its allowed list\./
    )
  })

  test(`[${impl}] safe search redirects to safesearchredirect with the search terms in the target's parameter`, async (t: TestContext) => {
    const { bp } = await startFixture(t, { ...opts, redirect: 'https://familysearch.yandex.ru/search/?family=yes' })
    const a = await get(bp.port, { host: 'www.google.com', path: '/search?q=casino+games&hl=en', from: CAROL })
    t.assert.strictEqual(a.status, 302)
    assertNoStore(t, a)
    t.assert.strictEqual(a.headers.location, 'https://familysearch.yandex.ru/search/?family=yes&text=casino+games')
  })

  test(`[${impl}] safe search without a usable target shows the page instead of a redirect loop`, async (t: TestContext) => {
    const { bp, store } = await startFixture(t, { ...opts, redirect: 'https://www.google.com/search?safe=active' })
    const loop = await get(bp.port, { host: 'www.google.com', path: '/search?q=x', from: CAROL, acceptLanguage: 'en' })
    assertHtml(t, loop)
    t.assert.match(visibleText(loop.body), /Safe search is on for your account\./)
    await store.write((w) => {
      w.putServerDefaults({ ...w.store.getServerDefaults(), safesearchredirect: '' })
    })
    const none = await get(bp.port, { host: 'www.bing.com', from: CAROL, acceptLanguage: 'en' })
    assertHtml(t, none)
    t.assert.match(visibleText(none.body), /Safe search is on/)
  })

  test(`[${impl}] a host that is not blocked (any more) gets a page with a link to retry the original URL`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const a = await get(bp.port, { host: 'news.example:8080', path: '/a/b?c=1&d=2', from: ANON, acceptLanguage: 'en' })
    assertHtml(t, a)
    t.assert.match(visibleText(a.body), /This site is no longer blocked/)
    t.assert.match(a.body, /href="http:\/\/news\.example:8080\/a\/b\?c&#x3D;1&amp;d&#x3D;2"/)
  })

  test(`[${impl}] non-page requests to a blocked host get a tiny 403, and 503 with Retry-After when not blocked`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    for (const accept of ['image/avif,image/webp,*/*', '*/*', 'application/json', '']) {
      const a = await get(bp.port, { host: 'casino.example', path: '/logo.png', accept })
      t.assert.strictEqual(a.status, 403, accept)
      t.assert.strictEqual(a.body, 'Blocked\n')
      t.assert.strictEqual(a.headers['content-type'], 'text/plain; charset=utf-8')
      assertNoStore(t, a)
    }
    const stale = await get(bp.port, { host: 'news.example', path: '/app.js', accept: '*/*' })
    t.assert.strictEqual(stale.status, 503)
    t.assert.strictEqual(stale.headers['retry-after'], '1')
    assertNoStore(t, stale)
  })

  test(`[${impl}] a hostile Host header gets a plain 400 that echoes nothing`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    for (const host of [
      '<script>alert(1)</script>.example',
      '"><img src=x onerror=alert(1)>',
      'casino.example:80:80'
    ]) {
      const a = await get(bp.port, { host })
      t.assert.strictEqual(a.status, 400, host)
      t.assert.strictEqual(a.headers['content-type'], 'text/plain; charset=utf-8')
      t.assert.doesNotMatch(a.body, /[<>"]/)
      assertNoStore(t, a)
    }
  })

  test(`[${impl}] a hostile path reaches the retry link escaped`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const a = await get(bp.port, { host: 'news.example', path: '/"><script>alert(1)</script>', acceptLanguage: 'en' })
    assertHtml(t, a)
    t.assert.doesNotMatch(a.body, /<script/i)
    t.assert.match(a.body, /&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    t.assert.match(String(a.headers['content-security-policy']), /default-src 'none'/)
  })

  test(`[${impl}] Accept-Language picks the page language, weighing q values`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const cases: Array<[string | undefined, string]> = [
      ['en-GB,en;q=0.9', 'en'],
      ['ru-RU,ru;q=0.9,en;q=0.8', 'ru'],
      ['de-DE,de;q=0.9,en;q=0.5,ru;q=0.4', 'en'],
      ['fr', 'ru'],
      ['en;q=0.1,ru;q=0.2', 'ru'],
      [undefined, 'ru']
    ]
    for (const [acceptLanguage, lang] of cases) {
      const a = await get(bp.port, {
        host: 'casino.example',
        ...(acceptLanguage === undefined ? {} : { acceptLanguage })
      })
      t.assert.match(a.body, new RegExp(`<html lang="${lang}">`), String(acceptLanguage))
      t.assert.match(visibleText(a.body), lang === 'en' ? /Gambling/ : /Азартные игры/)
    }
  })

  test(`[${impl}] with accept-language off the configured language is used whatever the browser asks`, async (t: TestContext) => {
    const { bp } = await startFixture(t, { ...opts, blockpage: ['language: en', 'accept-language: false'] })
    const a = await get(bp.port, { host: 'casino.example', acceptLanguage: 'ru-RU,ru' })
    t.assert.match(a.body, /<html lang="en">/)
    t.assert.match(visibleText(a.body), /Category Gambling/)
  })

  test(`[${impl}] requests for the API host go to the front door and never get a block page`, async (t: TestContext) => {
    const seen: string[] = []
    const frontDoor = {
      isApiHost: (h: string | undefined) => h?.toLowerCase().split(':')[0] === 'api.test',
      handle: async (req: { method: string; path: string }, res: { json: (v: unknown, s?: number) => void }) => {
        seen.push(`${req.method} ${req.path}`)
        res.json({ from: 'api' }, 200)
      }
    }
    const { bp, store } = await startFixture(t, { ...opts, frontDoor })
    // Even a policy that blocks everything must not turn the API host into a block page.
    await store.write((w) => {
      w.putList(null, 'black', ['-'])
    })
    const a = await get(bp.port, { host: 'API.test:80', path: '/users/alice' })
    t.assert.strictEqual(a.status, 200)
    t.assert.deepStrictEqual(JSON.parse(a.body), { from: 'api' })
    t.assert.deepStrictEqual(seen, ['GET /users/alice'])
    const page = await get(bp.port, { host: 'casino.example' })
    t.assert.strictEqual(page.status, 200)
    t.assert.deepStrictEqual(seen, ['GET /users/alice'])
  })

  test(`[${impl}] without a front door the API host gets 404, not a block page`, async (t: TestContext) => {
    const { bp, store } = await startFixture(t, opts)
    await store.write((w) => {
      w.putList(null, 'black', ['-'])
    })
    const a = await get(bp.port, { host: 'api.test' })
    t.assert.strictEqual(a.status, 404)
    t.assert.doesNotMatch(a.body, /<html/)
  })

  test(`[${impl}] a policy change is seen by the next request without restart`, async (t: TestContext) => {
    const { bp, store } = await startFixture(t, opts)
    const before = await get(bp.port, { host: 'social.example', from: ANON, acceptLanguage: 'en' })
    t.assert.match(visibleText(before.body), /no longer blocked/)
    await store.write((w) => {
      w.putServerDefaults({ ...w.store.getServerDefaults(), filter: [30, 40] })
    })
    const blocked = await get(bp.port, { host: 'social.example', from: ANON, acceptLanguage: 'en' })
    t.assert.match(visibleText(blocked.body), /Category Social networks/)
    await store.write((w) => {
      w.putList(null, 'white', ['social.example'])
    })
    const allowed = await get(bp.port, { host: 'www.social.example', from: ANON, acceptLanguage: 'en' })
    t.assert.match(visibleText(allowed.body), /no longer blocked/)
  })

  test(`[${impl}] HEAD and POST to a blocked host answer like GET, HEAD without a body`, async (t: TestContext) => {
    const { bp } = await startFixture(t, opts)
    const head = await get(bp.port, { host: 'casino.example', method: 'HEAD' })
    t.assert.strictEqual(head.status, 200)
    t.assert.strictEqual(head.body, '')
    assertNoStore(t, head)
    const post = await get(bp.port, { host: 'casino.example', method: 'POST', path: '/login' })
    assertHtml(t, post)
    t.assert.match(visibleText(post.body), /Азартные игры/)
  })
}
