/**
 * The campaign's cross-site page, in a real browser: Debian's Chromium (/usr/bin/chromium)
 * driven by playwright-core. A page served from another local origin (127.0.0.2, another site; and another
 * port of 127.0.0.1, the same site) sends the writes a page may send without asking: a `fetch` in `no-cors`
 * mode with a text/plain body, and a form post. The API refuses each (403 API_CROSS_SITE, with its audit line,
 * so the request did reach it) and the global blacklist stays empty. A name rebound to 127.0.0.1 gets 421.
 * The console, same origin, still saves the global blacklist.
 *
 * Under CI (CI=true) a missing Chromium is a failure; elsewhere the test skips and says why.
 */
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { test, type TestContext } from 'node:test'
import { chromium, type Browser } from 'playwright-core'
import { until } from '../engine/testing/wait.js'
import { startApi } from './testing/fixtures.js'

const CHROMIUM = '/usr/bin/chromium'
const missing = !existsSync(CHROMIUM)
const skip =
  missing && process.env.CI !== 'true'
    ? `${CHROMIUM} is missing (apt-get install chromium); the browser test runs only where it is installed`
    : false

/** The attacker's page: two writes to the API's global blacklist, then a title saying it tried. */
function attackPage(api: string): string {
  return `<!doctype html><html><head><title>loading</title></head><body>
<form id="f" method="POST" action="${api}/blacklist/" enctype="text/plain" target="sink"><input name='["form-proof.example","x' value='"]'></form>
<iframe name="sink"></iframe>
<script>
fetch(${JSON.stringify(`${api}/blacklist/`)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '["csrf-proof.example"]' })
  .catch(() => {})
  .finally(() => { document.getElementById('f').submit(); document.title = 'tried' })
</script></body></html>`
}

/** A web server at `host` that serves the attack page for every path. */
async function attacker(t: TestContext, host: string, api: string): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(attackPage(api))
  })
  server.listen(0, host)
  await once(server, 'listening')
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
  )
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return `http://${host}:${address.port}`
}

async function launch(t: TestContext, rules: string): Promise<Browser> {
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
      '--disable-sync',
      `--host-resolver-rules=${rules}`,
      '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable'
    ]
  })
  t.after(() => browser.close())
  return browser
}

test(
  'a page from another local origin cannot write to the API, a rebound name cannot read it, and the console still saves',
  { skip, timeout: 120_000 },
  async (t: TestContext) => {
    const s = await startApi({ impl: 'node' })
    t.after(() => s.close())
    const browser = await launch(t, 'MAP rebound.example 127.0.0.1, EXCLUDE localhost')
    const context = await browser.newContext()
    const refusedWrites = (): Array<Record<string, unknown>> =>
      s.lines.filter((l) => l.audit === 'api' && l.path === '/blacklist/' && l.status === 403)

    // Another site (127.0.0.2), then the same site on another port: two refused writes each.
    for (const [host, site] of [
      ['127.0.0.2', 'cross-site'],
      ['127.0.0.1', 'same-site']
    ] as const) {
      const before = refusedWrites().length
      const page = await context.newPage()
      await page.goto(await attacker(t, host, s.base))
      await until(
        `the ${site} page's two writes to be refused`,
        () => refusedWrites().length === before + 2,
        30_000,
        50
      )
      t.assert.strictEqual(await page.title(), 'tried')
      await page.close()
    }
    t.assert.deepStrictEqual(s.store.getList(null, 'black'), [], 'nothing reached the global blacklist')

    // DNS rebinding: the attacker's name now resolves to the API; the browser sends that name as Host.
    const rebound = await context.newPage()
    const answer = await rebound.goto(`http://rebound.example:${s.port}/users/`)
    t.assert.strictEqual(answer?.status(), 421)
    t.assert.match(await rebound.locator('body').innerText(), /API_MISDIRECTED_HOST/)

    // The console, from the API's own origin, saves the global blacklist as before.
    const consolePage = await context.newPage()
    await consolePage.goto(`${s.base}/ui/#/settings`)
    await consolePage.fill('textarea[name=global-black]', 'console.example')
    await consolePage.click('form:has(textarea[name=global-black]) button[type=submit]')
    await until("the console's write", () => s.store.getList(null, 'black').includes('console.example'), 30_000, 50)
    t.assert.deepStrictEqual(s.store.getList(null, 'black'), ['console.example'])
  }
)
