/**
 * The console's RPZ zone list in a real browser (Debian's Chromium, playwright-core): the api role asks
 * the rpz role (both child processes on one store) for its zones; the Lists page shows each zone with
 * its serial, a policy write moves the serial, and a stopped rpz role is said, not hidden. Under CI a
 * missing Chromium is a failure; elsewhere the test skips and says why.
 */
import { test, type TestContext } from 'node:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { tempDir } from '../engine/testing/temp.js'
import { fetchJson, until } from '../engine/testing/wait.js'

const CHROMIUM = '/usr/bin/chromium'
const skip =
  !existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false
const G = 'global.rpz.filterd'

test('the Lists page lists the RPZ zones with their serials', { skip, timeout: 120_000 }, async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-rpz-ui-')
  const file = join(dir, 'filterd.json')
  const dnsPort = await releasedPort()
  const metricsPort = await releasedPort()
  writeFileSync(
    file,
    JSON.stringify({
      common: { db: join(dir, 'db'), 'log-level': 'warn' },
      datafiles: { path: dir, cats: CONF, language: 'en' },
      stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') },
      lists: { refresh: false },
      rpz: {
        enabled: true,
        listen: `127.0.0.1:${dnsPort}`,
        'metrics-listen': `127.0.0.1:${metricsPort}`,
        log: '-',
        pid: join(dir, 'rpz.pid')
      }
    })
  )
  const api = await startRole(t, 'api', file)
  const rpz = await startRole(t, 'rpz', file)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu']
  })
  t.after(() => browser.close())
  const page = await browser.newPage()
  await page.goto(`${api.url}/ui/#/lists`)
  const serialCell = `table.rpz-zones tr[data-zone="${G}"] td[data-serial]`
  await page.waitForSelector(serialCell)
  const before = Number(await page.locator(serialCell).getAttribute('data-serial'))
  t.assert.match(await page.locator('div.rpz-zones').innerText(), new RegExp(`127\\.0\\.0\\.1:${dnsPort}`))

  t.assert.equal((await fetchJson(`${api.url}/blacklist/`, 'POST', ['new-block.example'])).status < 300, true)
  await until('the rpz role at the new serial', async () => {
    const zones = await fetchJson(`${api.url}/rpz/zones`)
    return (zones.body.zones as Array<{ name: string; serial: number }>).some((z) => z.name === G && z.serial > before)
  })
  await page.reload()
  await page.waitForSelector(serialCell)
  const after = Number(await page.locator(serialCell).getAttribute('data-serial'))
  t.assert.ok(after > before, `serial ${before} → ${after}`)
  t.assert.match(await page.locator(`tr[data-zone="${G}"]`).innerText(), /global/)

  await rpz.stop()
  await page.reload()
  await page.waitForSelector('div.rpz-zones [data-rpz="error"]')
  t.assert.match(await page.locator('div.rpz-zones').innerText(), /did not answer/)
})
