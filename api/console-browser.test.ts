/**
 * The operator console (ui/, served by the api role under /ui/) in a real browser: Debian's Chromium
 * (/usr/bin/chromium) driven by playwright-core, against the real DNS and api daemons sharing one store and
 * one statistics folder. A person creates a user with an address and a filter, a DNS query from that address
 * shows up blocked with its reason in the live log, "check a domain" gives the same reason, the user's
 * charts update by themselves within seconds (no import asked for, no reload) and show what the API reports, and the console switches to Russian.
 * Screenshots go to test-output/console/ (git-ignored; CI keeps them as artifacts).
 *
 * Under CI (CI=true) a missing Chromium is a failure; elsewhere the test skips and says why.
 */
import { test, type TestContext } from 'node:test'
import { connect, type Socket } from 'node:net'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CATEGORY } from '../engine/categories/index.js'
import { addUser, ask, world, writeConfigFile } from '../dns/testing/harness.js'
import { CONF, startRole } from '../engine/testing/daemon.js'
import { fetchJson as getJson } from '../engine/testing/wait.js'
import { TEST_OUTPUT_DIR } from '../blockpage/testing/fixture.js'

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = join(TEST_OUTPUT_DIR, 'console')
const missing = !existsSync(CHROMIUM)
const skip =
  missing && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false

interface Daemons {
  dnsPort: number
  api: string
  apiPid: number
  apiFile: string
}

async function daemons(t: TestContext): Promise<Daemons> {
  const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING], 'news.example': [CATEGORY.NEWS] } })
  // Somebody else, so the overview has a known user and an anonymous address to compare.
  await addUser(w.store, { name: 'neighbour', ip: ['127.0.0.9'] })
  const dnsFile = writeConfigFile(w)
  const doc = JSON.parse(readFileSync(dnsFile, 'utf8')) as Record<string, Record<string, unknown>>
  const apiFile = join(w.dir, 'api.json')
  writeFileSync(
    apiFile,
    JSON.stringify({
      ...doc,
      datafiles: { ...doc.datafiles, cats: CONF, language: 'en' },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(w.dir, 'api.pid') }
    })
  )
  const dns = await startRole(t, 'dns', dnsFile)
  const api = await startRole(t, 'api', apiFile)
  return { dnsPort: dns.port, api: api.url, apiPid: api.proc.pid!, apiFile }
}

async function launch(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({
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
      '--disable-sync'
    ]
  })
  t.after(() => browser.close())
  mkdirSync(SHOTS, { recursive: true })
  return browser
}

function today(): string {
  return new Date().toISOString().slice(0, 10)
}

test(
  'the console: create a user, see its blocked query live with the reason, check a domain, read its charts, switch to Russian',
  { skip, timeout: 170_000 },
  async (t: TestContext) => {
    const d = await daemons(t)
    const browser = await launch(t)
    const context = await browser.newContext({
      locale: 'en-US',
      timezoneId: 'UTC',
      viewport: { width: 1360, height: 900 }
    })
    const page: Page = await context.newPage()
    // The console asks nothing of any other origin.
    const foreign: string[] = []
    page.on('request', (r) => {
      if (!r.url().startsWith(d.api)) foreign.push(r.url())
    })
    const shot = (name: string): Promise<Buffer> => page.screenshot({ path: join(SHOTS, name), fullPage: true })

    const res = await page.goto(`${d.api}/ui/`)
    t.assert.strictEqual(res?.status(), 200)
    await page.locator('h1', { hasText: 'Overview' }).waitFor()
    await page.locator('#total-requests').waitFor()

    // Create a user with an address and a filter through the UI.
    await page.click('nav a[href="#/users"]')
    await page.fill('input[name=new-id]', 'kid')
    await page.fill('textarea[name=new-ip]', '127.0.0.2')
    await page.check(`input[name=new-filter][value="${CATEGORY.GAMBLING}"]`)
    await page.click('button[type=submit].primary')
    await page.locator('h1', { hasText: 'kid' }).waitFor()
    const user = await getJson(`${d.api}/users/kid`)
    t.assert.deepStrictEqual(
      [(user.body as { ip: string[] }).ip, (user.body as { filter: number[] }).filter],
      [['127.0.0.2'], [CATEGORY.GAMBLING]]
    )

    // A DNS query from that address appears in the user's live log, blocked, with its reason.
    await page.locator('.live-state', { hasText: 'Connected' }).waitFor()
    await ask(d.dnsPort, 'casino.example', 'A', { from: '127.0.0.2' })
    await ask(d.dnsPort, 'www.news.example', 'A', { from: '127.0.0.2' })
    await ask(d.dnsPort, 'casino.example', 'A', { from: '127.0.0.5' }) // anonymous: not in kid's log
    const row = page.locator('table.live tr[data-host="casino.example"]')
    await row.waitFor({ timeout: 20_000 })
    const rowText = await row.innerText()
    t.assert.match(rowText, /Blocked/)
    t.assert.match(rowText, /a blocked category/)
    t.assert.match(rowText, /Gambling/)
    t.assert.strictEqual(await row.getAttribute('data-reason'), 'category')
    await page.locator('table.live tr[data-host="www.news.example"]').waitFor({ timeout: 20_000 })
    t.assert.strictEqual(
      await page.locator('table.live tr').count(),
      3,
      "the header and kid's two queries, not the anonymous one"
    )

    // "Check a domain" gives the same reason.
    await page.fill('input[name=check-domain]', 'casino.example')
    await page.click('form.inline button:has-text("Check")')
    const verdict = page.locator('.verdict[data-step=category]')
    await verdict.waitFor()
    const verdictText = await verdict.innerText()
    t.assert.match(verdictText, /Blocked/)
    t.assert.match(verdictText, /a blocked category/)
    t.assert.match(verdictText, /Gambling/)
    await shot('user-live-check-en.png')

    // Client IDs (encrypted DNS) are set on the user page like the addresses, and stored lower case.
    await page.fill('form.settings textarea[name=client_ids]', 'Kid-Phone\nkid-tablet')
    await page.click('form.settings button[type=submit]')
    await page.locator('form.settings .muted', { hasText: 'Saved' }).waitFor()
    t.assert.deepStrictEqual((await getJson(`${d.api}/users/kid/client-ids/`)).body, ['kid-phone', 'kid-tablet'])

    // Live numbers: nobody imports and nobody reloads. The dns daemon closes its file every few seconds,
    // the api daemon takes it in every few seconds, and the page asks again by itself.
    await page.locator('#user-requests', { hasText: '2' }).waitFor({ timeout: 60_000 })
    const day = today()
    const api = (await getJson(`${d.api}/users/kid/stat/activity/day?from=${day}&to=${day}`)).body as {
      datasets: Array<{ data: number[] }>
    }
    t.assert.deepStrictEqual(
      api.datasets.map((s) => s.data),
      [[2], [1]]
    )
    await page.locator('#user-blocks', { hasText: '1' }).waitFor()
    t.assert.strictEqual(await page.locator('#user-requests').innerText(), String(api.datasets[0]!.data[0]))
    t.assert.strictEqual(await page.locator('#user-blocks').innerText(), String(api.datasets[1]!.data[0]))
    const dayRow = page.locator(`#days-table tr[data-day="${day}"] td.num`)
    t.assert.deepStrictEqual(await dayRow.allInnerTexts(), ['2', '1'])
    const domains = (await getJson(`${d.api}/users/kid/stat/domains/all?from=${day}&to=${day}`)).body as {
      labels: string[]
    }
    t.assert.deepStrictEqual(
      await page
        .locator('#domains-table tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-domain'))),
      domains.labels
    )
    await page.locator('#user-requests').scrollIntoViewIfNeeded()
    await shot('user-reports-en.png')

    // The overview counts everybody.
    await page.click('nav a[href="#/overview"]')
    await page.locator('#total-requests', { hasText: '3' }).waitFor()
    await shot('overview-en.png')

    // Russian.
    await page.click('button[data-lang=ru]')
    await page.locator('h1', { hasText: 'Обзор' }).waitFor()
    t.assert.match(await page.locator('nav').innerText(), /Пользователи/)
    await page.goto(`${d.api}/ui/#/users/kid`)
    await page.locator('h2', { hasText: 'Проверить домен' }).waitFor()
    await page.fill('input[name=check-domain]', 'casino.example')
    await page.click('form.inline button:has-text("Проверить")')
    t.assert.match(await page.locator('.verdict').innerText(), /Заблокирован[\s\S]*блокируемая категория/)
    // Category names follow the console's language, although the server's datafiles.language is English.
    t.assert.match(await page.locator('.verdict').innerText(), /Азартные игры/)
    await shot('user-ru.png')
    await page.click('nav a[href="#/settings"]')
    await page.locator('textarea[name=global-black]').waitFor()
    await shot('settings-ru.png')
    t.assert.deepStrictEqual(foreign, [])
  }
)

test(
  "a live log client that stops reading neither slows the DNS server nor grows the api daemon's memory",
  { timeout: 170_000 },
  async (t: TestContext) => {
    const d = await daemons(t)
    const rss = (): number =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${d.apiPid}/status`, 'utf8'))?.[1]) * 1024
    const port = Number(new URL(d.api).port)
    // Warm the api daemon's follower with a reading client first.
    const warm = await fetch(`${d.api}/live/queries?last=0`)
    t.assert.strictEqual(warm.status, 200)
    const sockets: Socket[] = []
    for (let i = 0; i < 4; i++) {
      const s = connect(port, '127.0.0.1')
      await new Promise((resolve) => s.once('connect', resolve))
      s.pause()
      s.write('GET /live/queries?last=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      sockets.push(s)
    }
    t.after(() => {
      for (const s of sockets) s.destroy()
    })
    await warm.body?.cancel()
    const before = rss()
    // Queries with long names, so the rows the stalled clients miss add up to megabytes.
    const started = Date.now()
    let answered = 0
    for (let batch = 0; batch < 40; batch++) {
      const names = Array.from({ length: 50 }, (_, i) => `q${batch}-${i}-${'x'.repeat(50)}.${'y'.repeat(50)}.example`)
      const answers = await Promise.all(
        names.map((n) =>
          ask(d.dnsPort, n, 'A', { from: '127.0.0.2' }).then(
            () => 1,
            () => 0
          )
        )
      )
      answered += answers.reduce((a: number, b: number) => a + b, 0)
    }
    const ms = Date.now() - started
    t.assert.strictEqual(answered, 2000, 'every query answered while the stalled clients wait')
    // Let the follower read the last rows (the writer flushes each second), then measure.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    const grown = rss() - before
    t.diagnostic(
      `2000 queries in ${ms} ms with 4 stalled live log clients; api RSS grew by ${Math.round(grown / 1024)} KiB`
    )
    t.assert.ok(grown < 64 * 1024 * 1024, `api RSS grew by ${grown} bytes`)
    // The daemon still serves.
    t.assert.strictEqual((await getJson(`${d.api}/users/neighbour`)).status, 200)
  }
)
