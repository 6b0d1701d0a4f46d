/**
 * Management API throughput against the real server over HTTP, side by side with a bare uWebSockets.js
 * hello-world (the ceiling) in the same run: writes (PUT a user with an address and a filter: one durable
 * LMDB commit each), reads (GET a user), and GET /config/ (the cheapest endpoint), the latter also as a caller
 * from outside with a Bearer token (the credential check's cached path, api/auth.ts). Each server runs in its
 * own child process, on a fresh store in a temp dir with USERS users seeded. The load generator is `wrk`
 * (one thread, a Lua script rotating users and bodies) when installed, else the Node keep-alive client;
 * CONNECTIONS keep-alive connections, one request in flight each. Cases alternate for ROUNDS rounds; the
 * median round is reported with its ratio to the ceiling's median and the server's CPU time per request.
 *
 * Every API case runs on each HTTP implementation of IMPLS (default `node,uws`): node:http is what the api
 * role serves with under `common.http-server: auto` (it answers the HTTP/1.0 of proxies and health checks,
 * engine/http roleHttpImpl), uWS what it serves with when forced.
 *
 *   node dist/bench/api/api.bench.js [seconds per case, default 3] [connections, default 32] [rounds, default 3] [impls, default node,uws]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { HttpImpl } from '../../engine/http/index.js'
import { silentLogger } from '../../engine/log/index.js'
import { loadTaxonomy } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { openConfiguredStore } from '../../engine/store/index.js'
import { openStatsDb } from '../../engine/stats/index.js'
import { createApiServer } from '../../api/server.js'
import { configFrom, tempDir, writeTaxonomy } from '../../api/testing/fixtures.js'
import { bearerToken, clientRecord } from '../../engine/auth/index.js'
import { hasWrk, keepAliveLoad, runWrk, type LoadResult } from '../common/load.js'
import { cpuSeconds, serveUwsHello } from '../common/ceiling.js'

async function serve(impl: HttpImpl): Promise<number> {
  const { dir, cleanup } = tempDir('filterd-api-bench-')
  writeTaxonomy(join(dir, 'cats'))
  const config = configFrom(
    dir,
    `datafiles:\n  cats: ${join(dir, 'cats')}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}`
  )
  const store = openConfiguredStore(config)
  const stats = { db: openStatsDb(join(dir, 'statsdb')), timezone: 'UTC' }
  const server = createApiServer({
    store,
    taxonomy: loadTaxonomy(config.datafiles.cats, 'en'),
    categories: new CategoryDb(store),
    config,
    logger: silentLogger(),
    stats,
    impl
  })
  // Seed every user the cases touch, so GET always hits and PUT is the common billing update of a known user.
  await store.write((w) => {
    for (let i = 0; i < USERS; i++) w.putUser(store.newUser(`u${i}`))
  })
  const client = await clientRecord('bench', BENCH_SECRET, new Date().toISOString(), undefined)
  await store.write((w) => {
    w.putApiClient(client)
  })
  const { port } = await server.listen('127.0.0.1', 0)
  if (server.http.impl !== impl) process.stderr.write(`note: the API server runs on ${server.http.impl}, not ${impl}\n`)
  process.on('SIGTERM', () => {
    void server
      .close()
      .then(() => stats.db.close())
      .then(() => store.close())
      .then(() => {
        cleanup()
        process.exit(0)
      })
  })
  return port
}

interface Case {
  name: string
  method: 'GET' | 'PUT'
  /** Path of request i (i counts from 0 and wraps at USERS). */
  path: (i: number) => string
  body?: (i: number) => string
  /** Sent as a caller from outside (relayed by the front door) with the bench client's Bearer token. */
  bearer?: true
}

/** The bench's API client secret (43 base64url characters, as `filterd api-client add` makes them). */
const BENCH_SECRET = 'benchbenchbenchbenchbenchbenchbenchbenchben'
const AUTH_HEADERS = `Authorization: Bearer ${bearerToken('bench', BENCH_SECRET)}\r\nX-Filterd-Client: 192.0.2.10\r\n`

const USERS = 1000
const ip = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
const CASES: Case[] = [
  { name: 'uws hello (ceiling)', method: 'GET', path: () => '/' },
  { name: 'GET /config/', method: 'GET', path: () => '/config/' },
  { name: 'GET /config/ (Bearer, from outside)', method: 'GET', path: () => '/config/', bearer: true },
  { name: 'GET /users/{id}', method: 'GET', path: (i) => `/users/u${i}` },
  {
    name: 'PUT /users/{id} (ip + filter)',
    method: 'PUT',
    path: (i) => `/users/u${i}`,
    body: (i) => JSON.stringify({ ip: [ip(i)], filter: [1, 40] })
  }
]

// The requests of a case, one per line for the Lua script: METHOD<TAB>PATH<TAB>BEARER<TAB>BODY.
function requestLines(c: Case): string {
  const auth = c.bearer === true ? bearerToken('bench', BENCH_SECRET) : ''
  let out = ''
  for (let i = 0; i < USERS; i++) out += `${c.method}\t${c.path(i)}\t${auth}\t${c.body?.(i) ?? ''}\n`
  return out
}

// Requests are formatted on first use, not at load: wrk sets the Host header after loading the script.
const LUA = `
local lines = {}
for line in io.lines(os.getenv("API_REQUESTS")) do lines[#lines + 1] = line end
local reqs = {}
local i = 0
request = function()
  i = i % #lines + 1
  local r = reqs[i]
  if r == nil then
    local m, p, a, b = lines[i]:match("^(%u+)\\t([^\\t]*)\\t([^\\t]*)\\t(.*)$")
    local h = {}
    if a ~= "" then h["Authorization"] = "Bearer " .. a; h["X-Filterd-Client"] = "192.0.2.10" end
    if b == "" then r = wrk.format(m, p, h) else h["Content-Type"] = "application/json"; r = wrk.format(m, p, h, b) end
    reqs[i] = r
  end
  return r
end
`

function rawRequest(c: Case, i: number): string {
  const body = c.body?.(i)
  const head = `${c.method} ${c.path(i)} HTTP/1.1\r\nHost: 127.0.0.1\r\n${c.bearer === true ? AUTH_HEADERS : ''}`
  return body === undefined
    ? head + '\r\n'
    : head + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main(): Promise<void> {
  const s = process.argv.indexOf('--serve')
  if (s !== -1) {
    const port =
      process.argv[s + 1] === 'hello'
        ? await serveUwsHello()
        : await serve(process.argv[s + 2] === 'uws' ? 'uws' : 'node')
    process.stdout.write(`${port}\n`)
    return
  }
  const seconds = Number(process.argv[2] ?? 3)
  const connections = Number(process.argv[3] ?? 32)
  const rounds = Number(process.argv[4] ?? 3)
  const impls = (process.argv[5] ?? 'node,uws').split(',').map((i): HttpImpl => (i === 'uws' ? 'uws' : 'node'))
  // The ceiling once, then every API case on each implementation.
  const plan: Array<{ c: Case; n: number; impl: HttpImpl | undefined; name: string }> = [
    { c: CASES[0]!, n: 0, impl: undefined, name: CASES[0]!.name }
  ]
  for (const [n, c] of CASES.entries()) {
    if (n > 0)
      for (const impl of impls) plan.push({ c, n, impl, name: `${c.name} (${impl === 'node' ? 'node:http' : 'uWS'})` })
  }
  const { dir, cleanup } = tempDir('filterd-api-bench-load-')
  const wrk = hasWrk()
  const script = join(dir, 'requests.lua')
  writeFileSync(script, LUA)
  const runs = new Map<string, Array<LoadResult & { cpuUs: number }>>()
  try {
    for (let round = 0; round < rounds; round++) {
      for (const { c, n, impl, name } of plan) {
        const child = spawn(
          process.execPath,
          [fileURLToPath(import.meta.url), '--serve', n === 0 ? 'hello' : 'api', impl ?? ''],
          { stdio: ['ignore', 'pipe', 'inherit'] }
        )
        const [line] = (await once(child.stdout, 'data')) as [Buffer]
        const port = Number(line.toString().trim())
        const file = join(dir, `case${n}.txt`)
        writeFileSync(file, requestLines(c))
        let next = 0
        const measure = async (d: number): Promise<LoadResult> =>
          wrk
            ? runWrk({ url: `http://127.0.0.1:${port}`, seconds: d, connections, script, env: { API_REQUESTS: file } })
            : await keepAliveLoad({ port, seconds: d, connections, request: () => rawRequest(c, next++ % USERS) })
        await measure(1) // warm-up: JIT, connections
        const cpu0 = cpuSeconds(child.pid!)
        const r = await measure(seconds)
        const cpuUs = ((cpuSeconds(child.pid!) - cpu0) * 1e6) / (r.rps * seconds)
        runs.set(name, [...(runs.get(name) ?? []), { ...r, cpuUs }])
        child.kill('SIGTERM')
        await once(child, 'exit')
      }
    }
  } finally {
    cleanup()
  }
  const ceiling = median(runs.get(CASES[0]!.name)!.map((r) => r.rps))
  console.log(
    `node ${process.version}, ${wrk ? 'wrk -t1' : 'node client'}, ${connections} keep-alive connections, ${seconds}s x ${rounds} alternating rounds (medians)`
  )
  console.table(
    plan.map(({ name }) => {
      const rs = runs.get(name)!
      const mid = [...rs].sort((a, b) => a.rps - b.rps)[Math.floor(rs.length / 2)]!
      return {
        case: name,
        'req/s': Math.round(mid.rps),
        'vs ceiling': (mid.rps / ceiling).toFixed(2),
        p50: mid.p50,
        p99: mid.p99,
        'non-2xx': rs.reduce((k, r) => k + r.non2xx, 0),
        'server CPU µs/req': median(rs.map((r) => r.cpuUs)).toFixed(1)
      }
    })
  )
}

await main()
