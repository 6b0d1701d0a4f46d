/**
 * The operator console's two promises: the overview's first load under 1 s, and a users search over
 * 100,000 users under 200 ms. One in-process api server on a fresh store (USERS users, each with an
 * address) with a week of imported statistics; Debian's Chromium (playwright-core) loads the console cold
 * (a new browser context each time: no cache) and the search page; the API calls are timed over HTTP too.
 * The ceiling, in the same run and browser: a cold load of a one-line static page from the same server.
 *
 *   node dist/bench/ui/console.bench.js [users, default 100000] [rounds, default 7]
 */
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { configFrom, tempDir } from '../../api/testing/fixtures.js'
import { createApiServer } from '../../api/server.js'
import { loadTaxonomy } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { CONF } from '../../engine/testing/daemon.js'
import { silentLogger } from '../../engine/log/index.js'
import { openConfiguredStore } from '../../engine/store/index.js'
import { openStatsDb } from '../../engine/stats/index.js'
import { createCsvQueryLog } from '../../engine/querylog/writer.js'
import { importClosedFiles } from '../../engine/stats/importer.js'

const USERS = Number(process.argv[2] ?? 100_000)
const ROUNDS = Number(process.argv[3] ?? 7)

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

async function main(): Promise<void> {
  const { dir, cleanup } = tempDir('filterd-ui-bench-')
  const config = configFrom(
    dir,
    `datafiles:\n  cats: ${CONF}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}\nstats:\n  dir: ${join(dir, 'csv')}\n  db: ${join(dir, 'statsdb')}`
  )
  const store = openConfiguredStore(config)
  let t0 = Date.now()
  for (let i = 0; i < USERS; i += 10_000) {
    await store.write((w) => {
      for (let j = i; j < Math.min(USERS, i + 10_000); j++) {
        const u = {
          ...store.newUser(`u${j}`),
          ip: [`10.${(j >> 16) & 255}.${(j >> 8) & 255}.${j & 255}`],
          filter: [1, 2, 30]
        }
        w.putUser(u)
        w.claimAddresses(u.name, u.ip)
      }
    })
  }
  process.stdout.write(`seeded ${USERS} users in ${Date.now() - t0} ms\n`)
  // A week of statistics: 200,000 queries from 2,000 users and anonymous addresses over 2,000 names.
  t0 = Date.now()
  const log = createCsvQueryLog(config, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
  const now = Date.now()
  for (let i = 0; i < 200_000; i++) {
    const blocked = i % 7 === 0
    const host = `site${i % 2000}.example`
    log.write({
      time: now - (i % (7 * 24)) * 3_600_000,
      address: `10.0.${(i >> 8) & 7}.${i & 255}`,
      user: i % 5 === 0 ? null : `u${i % 2000}`,
      name: host,
      blockedName: blocked ? host : '',
      reason: blocked ? 'category' : 'none',
      qtype: 1,
      rcode: 0,
      cats: [i % 3 === 0 ? 30 : 81],
      blockedCats: blocked ? [30] : [],
      nxdomain: false
    })
  }
  await log.close()
  const statsDb = openStatsDb(config.stats.db)
  await importClosedFiles(statsDb, config.stats.dir, 'UTC')
  process.stdout.write(`imported a week of statistics (200,000 queries) in ${Date.now() - t0} ms\n`)

  const server = createApiServer({
    store,
    taxonomy: loadTaxonomy(CONF, 'en'),
    taxonomyDir: CONF,
    categories: new CategoryDb(store),
    config,
    logger: silentLogger(),
    stats: { db: statsDb, timezone: 'UTC' }
  })
  server.http.route('GET', '/bench-blank', (_req, res) => {
    res.header('Content-Type', 'text/html; charset=utf-8').send('<!doctype html><title>x</title><p id=x>x</p>')
  })
  const { port } = await server.listen('127.0.0.1', 0)
  const base = `http://127.0.0.1:${port}`

  // HTTP: the search and paging calls the users page makes.
  const time = async (path: string, n = 30): Promise<number> => {
    const xs: number[] = []
    for (let i = 0; i < n; i++) {
      const s = performance.now()
      const r = await fetch(base + path)
      await r.arrayBuffer()
      if (r.status !== 200) throw new Error(`${path}: ${r.status}`)
      xs.push(performance.now() - s)
    }
    return median(xs)
  }
  const today = new Date().toISOString().slice(0, 10)
  const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10)
  const http: Array<[string, number]> = []
  for (const p of [
    '/search/u54321',
    '/search/u5432*',
    '/search/u5*',
    '/search/10.0.212.*',
    '/search/10.1.*',
    '/users?start=50000&stop=50050',
    `/stats/overview?from=${weekAgo}&to=${today}`
  ]) {
    http.push([p, await time(p)])
  }

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']
  })
  const cold = async (url: string, ready: string): Promise<number> => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } })
    const page = await context.newPage()
    const s = performance.now()
    await page.goto(url)
    await page.locator(ready).first().waitFor()
    const ms = performance.now() - s
    await context.close()
    return ms
  }
  const overview: number[] = []
  const blank: number[] = []
  const search: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    blank.push(await cold(`${base}/bench-blank`, '#x'))
    overview.push(await cold(`${base}/ui/#/overview`, '#total-requests'))
    search.push(await cold(`${base}/ui/#/users?q=u5432*`, 'table.users[data-count]'))
  }
  // Searching on an open page: type, submit, table drawn.
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${base}/ui/#/users`)
  await page.locator('table.users').waitFor()
  const typed: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const q = `u${1000 + r * 7}*`
    await page.fill('input[name=q]', q)
    await page.evaluate("document.querySelector('table.users')?.setAttribute('data-old', '1')")
    const s = performance.now()
    await page.press('input[name=q]', 'Enter')
    await page.locator('table.users[data-count]:not([data-old])').waitFor()
    typed.push(performance.now() - s)
  }
  await browser.close()
  await server.close()
  await statsDb.close()
  await store.close()
  cleanup()

  const out: string[] = []
  out.push(`users: ${USERS}; rounds: ${ROUNDS}; node ${process.version}`)
  out.push('| what | median ms | ratio to the blank-page ceiling |')
  out.push('|---|---:|---:|')
  const b = median(blank)
  out.push(`| cold load of a one-line page (ceiling) | ${b.toFixed(0)} | 1.0 |`)
  out.push(
    `| cold load of the console's overview, until the numbers show | ${median(overview).toFixed(0)} | ${(median(overview) / b).toFixed(1)} |`
  )
  out.push(
    `| cold load of the users page with a search (u5432*, 11 hits) | ${median(search).toFixed(0)} | ${(median(search) / b).toFixed(1)} |`
  )
  out.push(`| search typed on the open users page (Enter → table) | ${median(typed).toFixed(0)} | |`)
  out.push('')
  out.push('| API call (HTTP, median of 30) | ms |')
  out.push('|---|---:|')
  for (const [p, ms] of http) out.push(`| \`GET ${p}\` | ${ms.toFixed(1)} |`)
  process.stdout.write(out.join('\n') + '\n')
}

await main()
