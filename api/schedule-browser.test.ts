/**
 * The console's schedules editor in Debian's Chromium (playwright-core), against the real api
 * daemon: an operator adds a rule to a user, a bad window is refused with the field named, the saved rule
 * is what the API stores, and it survives a reload; removing it removes it from the store. Skips like
 * api/console-browser.test.ts where Chromium is missing (a failure under CI).
 */
import { test, type TestContext } from 'node:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson } from '../engine/testing/wait.js'
import { TEST_OUTPUT_DIR } from '../blockpage/testing/fixture.js'

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = join(TEST_OUTPUT_DIR, 'console')
const skip =
  !existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false

async function apiDaemon(t: TestContext): Promise<string> {
  const dir = tempDir(t)
  const file = join(dir, 'api.json')
  writeFileSync(
    file,
    JSON.stringify({
      common: { db: join(dir, 'db'), 'log-level': 'silent' },
      datafiles: { path: dir, cats: CONF, language: 'en' },
      stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') }
    })
  )
  return (await startRole(t, 'api', file)).url
}

async function schedulesOf(api: string): Promise<unknown> {
  const r = await fetchJson(`${api}/users/kid`)
  return (r.body as { schedules?: unknown }).schedules
}

test(
  'the console edits a user schedule: add, refuse a bad window naming it, save, reload, remove',
  { skip, timeout: 120_000 },
  async (t: TestContext) => {
    const api = await apiDaemon(t)
    t.assert.strictEqual((await fetchJson(`${api}/users/kid`, 'PUT', { ip: ['10.0.0.7'] })).status, 200)
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']
    })
    t.after(() => browser.close())
    mkdirSync(SHOTS, { recursive: true })
    const page: Page = await browser.newPage({
      locale: 'en-US',
      timezoneId: 'UTC',
      viewport: { width: 1360, height: 1200 }
    })
    await page.goto(`${api}/ui/#/users/kid`)
    await page.locator('button.schedule-add').click()
    const card = page.locator('fieldset.schedule').first()
    await card.locator('input[name=schedule-name]').fill('school nights')
    await card.locator('input[name=schedule-timezone]').fill('Europe/Berlin')
    await card.locator('textarea[name=schedule-windows]').fill('sun mon tue wed thu 25:00-07:00')
    await card.locator('input[name=schedule-filter]').fill('40 52')
    await page.click('form.settings button[type=submit].primary')
    await page.locator('form.settings .error', { hasText: 'schedules[0].windows[0].from' }).waitFor()
    t.assert.strictEqual(await schedulesOf(api), undefined)

    await card.locator('textarea[name=schedule-windows]').fill('sun mon tue wed thu 21:00-07:00\nsat 10:00-12:00')
    await page.click('form.settings button[type=submit].primary')
    await page.locator('form.settings .muted', { hasText: 'Saved' }).waitFor()
    t.assert.deepStrictEqual(await schedulesOf(api), [
      {
        name: 'school nights',
        timezone: 'Europe/Berlin',
        windows: [
          { days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '21:00', to: '07:00' },
          { days: ['sat'], from: '10:00', to: '12:00' }
        ],
        filter: [40, 52]
      }
    ])
    await page.reload()
    await page.locator('fieldset.schedule input[name=schedule-name]').waitFor()
    t.assert.strictEqual(
      await page.locator('fieldset.schedule input[name=schedule-name]').inputValue(),
      'school nights'
    )
    t.assert.strictEqual(
      await page.locator('fieldset.schedule textarea[name=schedule-windows]').inputValue(),
      'sun mon tue wed thu 21:00-07:00\nsat 10:00-12:00'
    )
    await page.screenshot({ path: join(SHOTS, 'schedules.png'), fullPage: true })
    await page.locator('fieldset.schedule button.schedule-remove').click()
    await page.click('form.settings button[type=submit].primary')
    await page.locator('form.settings .muted', { hasText: 'Saved' }).waitFor()
    t.assert.strictEqual(await schedulesOf(api), undefined)
  }
)

test(
  'the settings page edits the schedules of the anonymous defaults and of the new-user default',
  { skip, timeout: 120_000 },
  async (t: TestContext) => {
    const api = await apiDaemon(t)
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']
    })
    t.after(() => browser.close())
    const page: Page = await browser.newPage({
      locale: 'en-US',
      timezoneId: 'UTC',
      viewport: { width: 1360, height: 1400 }
    })
    const defaultsOf = async (path: string): Promise<unknown> =>
      ((await fetchJson(`${api}${path}`)).body as { schedules?: unknown }).schedules
    await page.goto(`${api}/ui/#/settings`)
    for (const [id, path, rule] of [
      ['defaults-config', '/config/', 'anonymous nights'],
      ['defaults-userconfig', '/userconfig/', 'new user nights']
    ] as const) {
      const form = page.locator(`#${id} form`)
      await form.locator('button.schedule-add').click()
      const card = form.locator('fieldset.schedule').first()
      await card.locator('input[name=schedule-name]').fill(rule)
      await card.locator('textarea[name=schedule-windows]').fill('mon 22:00-07:00\nmon 23:00-23:30')
      await card.locator('input[name=schedule-filter]').fill('40')
      await form.locator('button[type=submit].primary').click()
      // Overlapping windows are refused, the field named; nothing is stored.
      await form.locator('.error', { hasText: 'schedules[0].windows[1]' }).waitFor()
      t.assert.strictEqual(await defaultsOf(path), undefined, path)
      await card.locator('textarea[name=schedule-windows]').fill('sun mon tue wed thu 21:00-07:00')
      await form.locator('button[type=submit].primary').click()
      await form.locator('.muted', { hasText: 'Saved' }).waitFor()
      t.assert.deepStrictEqual(
        await defaultsOf(path),
        [
          {
            name: rule,
            windows: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '21:00', to: '07:00' }],
            filter: [40]
          }
        ],
        path
      )
    }
    await page.reload()
    await page.locator('#defaults-userconfig fieldset.schedule input[name=schedule-name]').waitFor()
    t.assert.strictEqual(
      await page.locator('#defaults-config fieldset.schedule input[name=schedule-name]').inputValue(),
      'anonymous nights'
    )
    await page.screenshot({ path: join(SHOTS, 'settings-schedules.png'), fullPage: true })
    // Removing the rule and saving removes it from the store.
    await page.locator('#defaults-config fieldset.schedule button.schedule-remove').click()
    await page.locator('#defaults-config form button[type=submit].primary').click()
    await page.locator('#defaults-config form .muted', { hasText: 'Saved' }).waitFor()
    t.assert.strictEqual(await defaultsOf('/config/'), undefined)
    t.assert.strictEqual((await defaultsOf('/userconfig/')) !== undefined, true)
  }
)
