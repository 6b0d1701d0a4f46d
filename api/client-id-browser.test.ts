/**
 * The console's user page in Debian's Chromium (playwright-core), against the real api daemon: it says
 * that a client ID carries no secret, and "Add a random ID" stores a new random ID for the user and
 * appends it to the list, keeping what was typed there. Skips like api/console-browser.test.ts where
 * Chromium is missing (a failure under CI).
 */
import { test, type TestContext } from 'node:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson, until } from '../engine/testing/wait.js'

const CHROMIUM = '/usr/bin/chromium'
const skip =
  !existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false

test(
  'the console adds a random client ID and says why a random one',
  { skip, timeout: 120_000 },
  async (t: TestContext) => {
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
    const api = (await startRole(t, 'api', file)).url
    t.assert.strictEqual((await fetchJson(`${api}/users/kid`, 'PUT', { client_ids: ['kid-phone'] })).status, 200)
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']
    })
    t.after(() => browser.close())
    const page = await browser.newPage({ locale: 'en-US', timezoneId: 'UTC' })
    await page.goto(`${api}/ui/#/users/kid`)
    const ids = page.locator('textarea[name=client_ids]')
    await ids.waitFor()
    await page.locator('form.settings', { hasText: 'Prefer random IDs' }).waitFor()
    await ids.fill('kid-phone\ntyped-not-saved')
    await page.click('button[name=random-client-id]')
    await until('the new ID in the list', async () => (await ids.inputValue()).split('\n').length === 3, 20_000, 100)
    const shown = (await ids.inputValue()).split('\n')
    t.assert.deepStrictEqual(shown.slice(0, 2), ['kid-phone', 'typed-not-saved'])
    t.assert.match(shown[2]!, /^[a-z2-7]{20}$/)
    const stored = (await fetchJson(`${api}/users/kid/client-ids/`)).body
    t.assert.deepStrictEqual(stored, ['kid-phone', shown[2]])
  }
)
