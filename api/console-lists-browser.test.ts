/**
 * The console's Lists page in a real browser (Debian's Chromium, playwright-core) against the api role:
 * an operator adds a subscription with the form, refreshes it, and the table shows its entries and
 * last success; a config source is listed without a remove button. Under CI a missing Chromium is a
 * failure; elsewhere the test skips and says why.
 */
import { test, type TestContext } from 'node:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { startListServer } from '../engine/testing/list-server.js'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'

const CHROMIUM = '/usr/bin/chromium'
const skip =
  !existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false

test('the Lists page adds, refreshes and shows a subscription', { skip, timeout: 120_000 }, async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-lists-ui-')
  const lists = await startListServer(t, { kind: 'list', body: '0.0.0.0 a.example\n0.0.0.0 b.example\n' })
  const file = join(dir, 'filterd.json')
  writeFileSync(
    file,
    JSON.stringify({
      common: { db: join(dir, 'db'), 'log-level': 'warn' },
      datafiles: { path: dir, cats: CONF, language: 'en' },
      stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') },
      lists: {
        refresh: false,
        sources: [{ id: 'cfg', url: 'http://127.0.0.1:9/x', format: 'domains', target: 'whitelist', enabled: false }]
      }
    })
  )
  const api = await startRole(t, 'api', file)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu']
  })
  t.after(() => browser.close())
  const page = await browser.newPage()
  await page.goto(`${api.url}/ui/#/lists`)
  await page.waitForSelector('table.subscriptions tr[data-id="cfg"]')
  t.assert.strictEqual(await page.locator('tr[data-id="cfg"] button[data-delete]').count(), 0)
  await page.fill('form input[name="id"]', 'ads')
  await page.fill('form input[name="url"]', lists.url)
  await page.selectOption('form select[name="format"]', 'hosts')
  await page.click('form button[type="submit"]')
  await page.waitForSelector('tr[data-id="ads"]')
  await page.click('tr[data-id="ads"] button[data-refresh]')
  await page.waitForSelector('tr[data-id="ads"] td[data-entries="2"]')
  const text = await page.locator('tr[data-id="ads"]').innerText()
  t.assert.match(text, /hosts/)
  t.assert.match(text, /blacklist/)
  t.assert.doesNotMatch(text, /never/)
  await page.click('tr[data-id="ads"] button[data-delete]')
  await page.waitForSelector('tr[data-id="ads"]', { state: 'detached' })
})
