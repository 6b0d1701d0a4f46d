/**
 * Management API throughput against the real server over HTTP: writes (PUT a user with an address and a
 * filter: one durable LMDB commit each) and reads (GET a user). The server runs in a child process (its own
 * CPU), on a fresh store in a temp dir; the client keeps CONCURRENCY keep-alive connections (node:http Agent),
 * each with one request in flight. The baseline row is GET /config/, the cheapest endpoint. USERS users are
 * seeded before the run.
 *
 *   node dist/bench/api/api.bench.js [seconds per case, default 3] [concurrency, default 32]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { silentLogger } from '../../engine/log/index.js'
import { loadTaxonomy } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { openConfiguredStore } from '../../engine/store/index.js'
import { openStatsDb } from '../../engine/stats/index.js'
import { createApiServer } from '../../api/server.js'
import { configFrom, tempDir, writeTaxonomy } from '../../api/fixtures.js'
import { join } from 'node:path'

async function serve (): Promise<void> {
  const { dir, cleanup } = tempDir('filterd-api-bench-')
  writeTaxonomy(join(dir, 'cats'))
  const config = configFrom(dir, `datafiles:\n  cats: ${join(dir, 'cats')}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}`)
  const store = openConfiguredStore(config)
  const stats = { db: openStatsDb(join(dir, 'statsdb')), timezone: 'UTC' }
  const server = createApiServer({
    store, taxonomy: loadTaxonomy(config.datafiles.cats, 'en'), categories: new CategoryDb(store), config, logger: silentLogger(), stats
  })
  // Seed every user the cases touch, so GET always hits and PUT is the common billing update of a known user.
  await store.write((w) => { for (let i = 0; i < USERS; i++) w.putUser(store.newUser(`u${i}`)) })
  const { port } = await server.listen('127.0.0.1', 0)
  process.stdout.write(`${port} ${server.http.impl}\n`)
  process.on('SIGTERM', () => { void server.close().then(() => stats.db.close()).then(() => store.close()).then(() => { cleanup(); process.exit(0) }) })
}

interface Case { name: string, method: string, path: (i: number) => string, body?: (i: number) => string }

const USERS = 1000
const ip = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
const CASES: Case[] = [
  { name: 'GET /config/ (baseline)', method: 'GET', path: () => '/config/' },
  { name: 'PUT /users/{id} (ip + filter)', method: 'PUT', path: (i) => `/users/u${i % USERS}`, body: (i) => JSON.stringify({ ip: [ip(i % USERS)], filter: [1, 40] }) },
  { name: 'GET /users/{id}', method: 'GET', path: (i) => `/users/u${i % USERS}` }
]

function once1 (agent: Agent, port: number, c: Case, i: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = c.body?.(i)
    const req = request({
      agent, host: '127.0.0.1', port, method: c.method, path: c.path(i),
      headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
    }, (res) => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function run (port: number, c: Case, seconds: number, concurrency: number): Promise<{ ops: number, latencies: number[], errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const latencies: number[] = []
  let errors = 0
  let next = 0
  const end = performance.now() + seconds * 1000
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const status = await once1(agent, port, c, next++)
      latencies.push(performance.now() - t0)
      if (status >= 300) errors++
    }
  }))
  agent.destroy()
  return { ops: latencies.length / seconds, latencies, errors }
}

function pct (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0
}

async function main (): Promise<void> {
  if (process.argv.includes('--serve')) { await serve(); return }
  const seconds = Number(process.argv[2] ?? 3)
  const concurrency = Number(process.argv[3] ?? 32)
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const [line] = await once(child.stdout, 'data') as [Buffer]
  const [portText, impl] = line.toString().trim().split(' ')
  const port = Number(portText)
  const rows: Array<Record<string, string | number>> = []
  for (const c of CASES) {
    await run(port, c, Math.min(0.5, seconds), concurrency)          // warm-up: JIT, connections, users exist for GET
    const r = await run(port, c, seconds, concurrency)
    const sorted = r.latencies.sort((a, b) => a - b)
    rows.push({ case: c.name, 'req/s': Math.round(r.ops), 'p50 ms': +pct(sorted, 0.5).toFixed(2), 'p99 ms': +pct(sorted, 0.99).toFixed(2), errors: r.errors })
  }
  child.kill('SIGTERM')
  await once(child, 'exit')
  process.stdout.write(`management API over ${impl}, ${concurrency} keep-alive connections, ${seconds} s per case, node ${process.version}\n`)
  console.table(rows)
}

await main()
