/**
 * The block page in a real browser: Debian's Chromium (/usr/bin/chromium, never a downloaded one), driven by
 * playwright-core. Chromium resolves the blocked names to the test server with --host-resolver-rules, so the
 * page sees them in Host exactly as after a DNS block. Checks the text a person reads and saves screenshots
 * under test-output/blockpage/ (git-ignored) for a human to look at.
 *
 * Under CI (CI=true) a missing Chromium is a failure; elsewhere the test skips and says why.
 */
import { test, type TestContext } from 'node:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { startFixture, TEST_OUTPUT_DIR } from './testing/fixture.js'

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = join(TEST_OUTPUT_DIR, 'blockpage')

const missing = !existsSync(CHROMIUM)
const skip =
  missing && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false

test('a person sees the blocked domain and the category names in Chromium', { skip }, async (t: TestContext) => {
  const { bp, store } = await startFixture(t, { productName: 'Example Telecom · Safe Internet' })
  await store.write((w) => {
    w.putServerDefaults({ ...w.store.getServerDefaults(), filter: [30, 40] })
  })
  // Every *.example name (subdomains too: `*` spans dots) goes to the test server; nothing else resolves.
  const rules = `MAP *.example 127.0.0.1:${bp.port}, EXCLUDE localhost`
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=${rules}`,
      // Chromium would first try https:// for these names (HTTPS-Upgrades); the block page is plain HTTP.
      '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable'
    ]
  })
  t.after(() => browser.close())
  mkdirSync(SHOTS, { recursive: true })

  const visit = async (
    locale: string,
    url: string,
    shot: string,
    viewport = { width: 1280, height: 800 }
  ): Promise<string> => {
    const context = await browser.newContext({ locale, viewport })
    try {
      const page = await context.newPage()
      const response = await page.goto(url)
      t.assert.strictEqual(response?.status(), 200, url)
      t.assert.strictEqual(await response?.headerValue('cache-control'), 'no-store')
      await page.screenshot({ path: join(SHOTS, shot), fullPage: true })
      return await page.locator('body').innerText()
    } finally {
      await context.close()
    }
  }

  const ru = await visit('ru-RU', 'http://casino.example/poker?table=1', 'category-ru.png')
  t.assert.match(ru, /Доступ к сайту ограничен/)
  t.assert.match(ru, /casino\.example/)
  t.assert.match(ru, /Азартные игры/)
  t.assert.match(ru, /Example Telecom · Safe Internet/)

  const en = await visit('en-US', 'http://www.mixed.example/', 'category-en.png')
  t.assert.match(en, /Access to this site is restricted/)
  t.assert.match(en, /www\.mixed\.example/)
  t.assert.match(en, /Gambling/)
  t.assert.match(en, /Social networks/)

  const list = await visit('en-US', 'http://global-listed.example/', 'list-en.png')
  t.assert.match(list, /global-listed\.example/)
  t.assert.match(list, /blocked by your provider for all customers/)
  t.assert.doesNotMatch(list, /Gambling/)

  const listRu = await visit('ru-RU', 'http://global-listed.example/', 'list-ru-mobile.png', {
    width: 390,
    height: 760
  })
  t.assert.match(listRu, /заблокирован оператором связи/)

  const unblocked = await visit('en-US', 'http://news.example/today', 'unblocked-en.png')
  t.assert.match(unblocked, /no longer blocked/)
  t.assert.match(unblocked, /Open news\.example/)
})
