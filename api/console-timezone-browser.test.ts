/**
 * One time zone on every page of the console, the server's (stats.timezone), labelled: the live log's times,
 * the schedule editor's default zone and the charts' note, in Debian's Chromium (playwright-core) set to
 * another zone than the server's, against the real api daemon. Skips like api/console-browser.test.ts where
 * Chromium is missing (a failure under CI).
 */
import { test, type TestContext } from 'node:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { CSV_HEADER, formatRow } from '../engine/querylog/index.js'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson } from '../engine/testing/wait.js'

const CHROMIUM = '/usr/bin/chromium'
const skip =
  !existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false
const SERVER_ZONE = 'Asia/Kolkata'
/** 06:07:08 UTC: 11:37:08 in Kolkata, 02:07:08 in New York (the browser's zone), 06:07:08 in UTC. */
const QUERY_AT = Date.UTC(2024, 4, 15, 6, 7, 8)

test(
  "the console shows every time in the server's zone, labelled: live log, schedule editor, charts",
  { skip, timeout: 120_000 },
  async (t: TestContext) => {
    const dir = tempDir(t)
    const statsDir = join(dir, 'stats')
    mkdirSync(statsDir, { recursive: true })
    // A DNS process's current statistics file (this process stands for it), which the live log follows.
    writeFileSync(
      join(statsDir, `current-${process.pid}-1000.csv.part`),
      CSV_HEADER + formatRow(QUERY_AT, false, '10.0.0.7', 'zone.example', '', 'none', [], [], 'kid')
    )
    const file = join(dir, 'api.json')
    writeFileSync(
      file,
      JSON.stringify({
        common: { db: join(dir, 'db'), 'log-level': 'silent' },
        datafiles: { path: dir, cats: CONF, language: 'en' },
        stats: { dir: statsDir, db: join(dir, 'statsdb'), timezone: SERVER_ZONE },
        api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') }
      })
    )
    const api = (await startRole(t, 'api', file)).url
    t.assert.deepStrictEqual((await fetchJson(`${api}/stats/timezone`)).body, { timezone: SERVER_ZONE })
    t.assert.strictEqual((await fetchJson(`${api}/users/kid`, 'PUT', { ip: ['10.0.0.7'] })).status, 200)
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']
    })
    t.after(() => browser.close())
    const page = await browser.newPage({
      locale: 'en-US',
      timezoneId: 'America/New_York',
      viewport: { width: 1360, height: 1200 }
    })

    await page.goto(`${api}/ui/#/live`)
    const time = page.locator('table.live tbody tr[data-host="zone.example"] td.live-time')
    await time.waitFor()
    t.assert.strictEqual(await time.textContent(), '11:37:08')
    t.assert.strictEqual(await page.locator('table.live th.live-time').textContent(), `Time (${SERVER_ZONE})`)

    await page.goto(`${api}/ui/#/users/kid`)
    await page.locator('button.schedule-add').click()
    const zone = page.locator('fieldset.schedule input[name=schedule-timezone]').first()
    await page.locator('fieldset.schedule .schedule-zone-default', { hasText: SERVER_ZONE }).first().waitFor()
    t.assert.strictEqual(await zone.getAttribute('placeholder'), SERVER_ZONE)
    t.assert.strictEqual(await zone.inputValue(), '', 'an empty zone: the rule runs in the server zone')
    await page
      .locator('.zone-note', { hasText: `Times in ${SERVER_ZONE}` })
      .first()
      .waitFor()

    await page.goto(`${api}/ui/#/overview`)
    const notes = page.locator('.zone-note', { hasText: `Times in ${SERVER_ZONE}` })
    await notes.first().waitFor()
    t.assert.ok((await notes.count()) >= 2, 'both charts of the overview say their zone')
    t.assert.strictEqual(await page.locator('.zone-note').count(), await notes.count(), 'no other zone named')
  }
)
