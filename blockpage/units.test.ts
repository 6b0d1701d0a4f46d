import { test, type TestContext } from 'node:test'
import { join } from 'node:path'
import { parseConfig } from '../engine/features.js'
import { loadSafeHosts } from '../engine/policy/index.js'
import { pickLanguage } from './language.js'
import { safeSearchRedirect, engineOfHost } from './safesearch.js'
import { hostOf, wantsPage } from './server.js'
import { CONF_DIR } from './testing/fixture.js'

const safeHosts = loadSafeHosts(join(CONF_DIR, 'safesearch.txt'))

test('hostOf lower-cases, strips the port and trailing dot, and refuses what is not a host', (t: TestContext) => {
  t.assert.strictEqual(hostOf('WWW.Casino.Example.:8080'), 'www.casino.example')
  t.assert.strictEqual(hostOf('Кремль.РФ'), 'xn--e1ajeds9e.xn--p1ai')
  t.assert.strictEqual(hostOf('[::FFFF:127.0.0.1]:80'), '127.0.0.1')
  t.assert.strictEqual(hostOf('10.0.0.1:80'), '10.0.0.1')
  for (const bad of [
    undefined,
    '',
    '<script>.example',
    'a b',
    'x.example:99999999',
    'x.example:80:80',
    '[zz]:80',
    'a..b'
  ]) {
    t.assert.strictEqual(hostOf(bad), undefined, String(bad))
  }
})

test('only HTML-accepting requests count as page loads', (t: TestContext) => {
  t.assert.strictEqual(wantsPage('text/html,application/xhtml+xml,*/*;q=0.8'), true)
  t.assert.strictEqual(wantsPage('application/xhtml+xml'), true)
  for (const a of [undefined, '*/*', 'image/webp,*/*', 'application/json', 'text/css'])
    t.assert.strictEqual(wantsPage(a), false, String(a))
})

test("pickLanguage takes the highest-weighted supported language, ties in the browser's order", (t: TestContext) => {
  t.assert.strictEqual(pickLanguage('ru-RU,ru;q=0.9,en-US;q=0.8', 'en'), 'ru')
  t.assert.strictEqual(pickLanguage('en;q=0.5,ru;q=0.5', 'ru'), 'en')
  t.assert.strictEqual(pickLanguage('de,fr;q=0.9', 'ru'), 'ru')
  t.assert.strictEqual(pickLanguage('de,*;q=0.5', 'en'), 'en')
  t.assert.strictEqual(pickLanguage('en;q=0,ru;q=0.1', 'en'), 'ru')
  t.assert.strictEqual(pickLanguage('EN-us', 'ru'), 'en')
  t.assert.strictEqual(pickLanguage('en;q=1.5.2', 'ru'), 'ru')
  t.assert.strictEqual(pickLanguage(undefined, 'ru'), 'ru')
})

test('safe search keeps the terms between the engines whose parameter is known', (t: TestContext) => {
  const cases: Array<[string, string, string, string]> = [
    [
      'https://forcesafesearch.google.com/search?safe=active',
      'yandex',
      'text=poker&lr=213',
      'https://forcesafesearch.google.com/search?safe=active&q=poker'
    ],
    [
      'https://familysearch.yandex.ru/search/',
      'google',
      'q=a+b&hl=ru',
      'https://familysearch.yandex.ru/search/?text=a+b'
    ],
    [
      'https://safe.duckduckgo.com/?kp=1',
      'yahoo',
      'p=%D0%BA%D0%BE%D1%82',
      'https://safe.duckduckgo.com/?kp=1&q=%D0%BA%D0%BE%D1%82'
    ],
    ['https://search.yahoo.example/', 'bing', 'q=x', 'https://search.yahoo.example/?p=x'],
    ['https://safe.isp.example/search', 'google', 'q=poker', 'https://safe.isp.example/search'],
    ['https://forcesafesearch.google.com/', 'google', '', 'https://forcesafesearch.google.com/']
  ]
  for (const [target, engine, query, location] of cases) {
    t.assert.deepStrictEqual(
      safeSearchRedirect(target, engine, query, safeHosts),
      { kind: 'redirect', location },
      `${engine} → ${target}`
    )
  }
})

test('the shipped default safesearchredirect redirects, with the search terms, instead of tripping the loop guard', (t: TestContext) => {
  const target = parseConfig('', '/x.yaml').common.safesearchredirect
  for (const [engine, query] of [
    ['google', 'q=cats'],
    ['bing', 'q=cats'],
    ['duckduckgo', 'q=cats'],
    ['yandex', 'text=cats']
  ] as const) {
    const answer = safeSearchRedirect(target, engine, query, safeHosts)
    t.assert.strictEqual(answer.kind, 'redirect', `${engine}: ${JSON.stringify(answer)}`)
    if (answer.kind === 'redirect') t.assert.strictEqual(new URL(answer.location).searchParams.get('q'), 'cats')
  }
})

test('safe search refuses empty, non-http and looping targets', (t: TestContext) => {
  t.assert.deepStrictEqual(safeSearchRedirect('', 'google', 'q=x', safeHosts), { kind: 'page', why: 'no-target' })
  t.assert.deepStrictEqual(safeSearchRedirect('javascript:alert(1)', 'google', 'q=x', safeHosts), {
    kind: 'page',
    why: 'bad-target'
  })
  t.assert.deepStrictEqual(safeSearchRedirect('not a url', 'google', 'q=x', safeHosts), {
    kind: 'page',
    why: 'bad-target'
  })
  t.assert.deepStrictEqual(safeSearchRedirect('https://www.bing.com/?adlt=strict', 'google', 'q=x', safeHosts), {
    kind: 'page',
    why: 'loop'
  })
  t.assert.strictEqual(engineOfHost('www.google.co.uk', safeHosts), 'google')
  t.assert.strictEqual(engineOfHost('safe.isp.example', safeHosts), undefined)
})
