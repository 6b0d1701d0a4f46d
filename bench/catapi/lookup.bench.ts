/**
 * Registered `/domain/` lookups per second against the categorization API, side by side with a
 * uWebSockets.js hello-world (the ceiling) in the same run on the same machine.
 *
 * Data: the host names of /work/shared/data/top-domains.csv.gz (Cisco Umbrella top 100k, in rank
 * order) when present, each given one or two categories; synthetic names otherwise. The request mix:
 * - `zipf` (default, the "realistic mix"): 200 000 requests drawn by rank with Zipf's law (the
 *   chance of rank r is proportional to 1/r), the popularity model that web and DNS request
 *   streams follow; seeded, so every run sends the same requests;
 * - `uniform` (`--uniform`, the worst case for any cache): every name once, in rank order.
 * One request in four asks for a subdomain (`m.<name>`), so the suffix walk takes a step. All
 * carry one client's Basic credentials (verified once by scrypt, then from the cache), as a billing
 * integration would send them.
 *
 * Each server runs in its own child process. The load generator is `wrk` (one thread, a Lua script
 * rotating the paths) when installed, else a Node keep-alive client; both subjects get the same
 * requests (the hello-world answers every path). Subjects alternate for ROUNDS rounds; the median
 * round of each (the headline) and the best are reported, each as a ratio to the ceiling's, with
 * the server's median CPU time per request.
 *
 *   node dist/bench/catapi/lookup.bench.js [seconds per round, default 5] [connections, default 32] [rounds, default 3] [--uniform]
 *
 * On a shared machine other work disturbs single rounds (mostly downwards); compare the ratios,
 * not the absolute numbers, and rerun when the two ratios disagree much.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { CategoryDbBuilder } from '../../engine/catdb/index.js'
import { loadTaxonomy } from '../../engine/categories/index.js'
import { normalizeDomain } from '../../engine/names/index.js'
import { Store } from '../../engine/store/index.js'
import { clientRecord } from '../../engine/auth/index.js'
import { ExistenceChecker } from '../../catapi/resolver.js'
import { createCatApi } from '../../catapi/server.js'
import { hasWrk, keepAliveLoad, runWrk, type LoadResult } from '../common/load.js'
import { cpuSeconds, serveUwsHello } from '../common/ceiling.js'

const TOP = '/work/shared/data/top-domains.csv.gz'
const CONF = fileURLToPath(new URL('../../../conf/', import.meta.url))
const WARMUP_SECONDS = 3
const CLIENT_ID = 'bench'
const SECRET = 'bench-secret-0123456789'
const AUTH = 'Basic ' + Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')

function loadNames(): { names: string[]; source: string } {
  if (existsSync(TOP)) {
    const names: string[] = []
    for (const line of gunzipSync(readFileSync(TOP)).toString('utf8').split('\n').slice(1)) {
      const n = normalizeDomain(line.slice(line.indexOf(',') + 1).trim())
      if (n !== undefined) names.push(n)
    }
    return { names, source: `${TOP} (${names.length} names)` }
  }
  const names = Array.from({ length: 100_000 }, (_, i) => `host${i}.example${i % 997}.com`)
  return { names, source: 'synthetic (100000 names)' }
}

async function prepare(dir: string): Promise<string[]> {
  const { names, source } = loadNames()
  console.log(`data: ${source}`)
  const tax = loadTaxonomy(CONF, 'en')
  const cats = tax.numbers.filter((n) => n !== 0)
  const store = Store.open(join(dir, 'db'))
  const b = await CategoryDbBuilder.begin(store)
  names.forEach((n, i) => {
    const c = [cats[i % cats.length]!]
    if (i % 3 === 0) c.push(cats[(i * 7 + 1) % cats.length]!)
    void b.put(n, false, c)
  })
  await b.commit()
  const record = await clientRecord(CLIENT_ID, SECRET, new Date().toISOString(), 'bench')
  await store.write((w) => {
    w.putClient(record)
  })
  await store.close()
  const path = (rank: number, i: number): string => `/domain/${i % 4 === 3 ? 'm.' : ''}${names[rank]!}`
  if (process.argv.includes('--uniform')) return names.map((_, i) => path(i, i))
  return zipfRanks(names.length, 200_000).map(path)
}

/** `count` ranks in [0, n) drawn with P(r) ∝ 1/(r+1), from a fixed seed. */
function zipfRanks(n: number, count: number): number[] {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let r = 0; r < n; r++) cdf[r] = sum += 1 / (r + 1)
  let seed = 0x9e3779b9
  const random = (): number => {
    // xorshift32: deterministic, and plenty for picking ranks
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 0x1_0000_0000
  }
  const out: number[] = []
  for (let i = 0; i < count; i++) {
    const target = random() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid]! < target) lo = mid + 1
      else hi = mid
    }
    out.push(lo)
  }
  return out
}

async function serve(subject: string, dir: string): Promise<number> {
  if (subject === 'uws hello') return await serveUwsHello()
  const store = Store.open(join(dir, 'db'))
  const api = createCatApi({
    store,
    taxonomy: loadTaxonomy(CONF, 'en'),
    existence: new ExistenceChecker({ resolvers: [] }),
    impl: 'uws'
  })
  const ports = await api.listen({ host: '127.0.0.1', port: 0 }, { host: '127.0.0.1', port: 0 })
  return ports.registered
}

const LUA = `
local paths = {}
for line in io.lines(os.getenv("CATAPI_PATHS")) do paths[#paths + 1] = line end
local auth = os.getenv("CATAPI_AUTH")
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i], { ["Authorization"] = auth })
end
`

async function prepareDir(dir: string): Promise<string[]> {
  const paths = await prepare(dir)
  writeFileSync(join(dir, 'paths.txt'), paths.join('\n') + '\n')
  writeFileSync(join(dir, 'rotate.lua'), LUA)
  return paths
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--serve')
  if (i !== -1) {
    process.stdout.write(`${await serve(process.argv[i + 1]!, process.argv[i + 2]!)}\n`)
    return
  }
  // `--prepare DIR` leaves the database, paths.txt and rotate.lua in DIR, for profiling one subject
  // with `--serve <subject> DIR` and a load generator of one's choice.
  const p = process.argv.indexOf('--prepare')
  if (p !== -1) {
    await prepareDir(process.argv[p + 1]!)
    return
  }
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'))
  const seconds = Number(args[0] ?? 5)
  const connections = Number(args[1] ?? 32)
  const ROUNDS = Number(args[2] ?? 3)
  const dir = mkdtempSync(join(tmpdir(), 'filterd-bench-catapi-'))
  try {
    const paths = await prepareDir(dir)
    const wrk = hasWrk()
    const runs = new Map<string, Array<LoadResult & { cpuUsPerRequest: number }>>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of ['uws hello', 'catapi /domain/ (registered)']) {
        const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', subject, dir], {
          stdio: ['ignore', 'pipe', 'inherit']
        })
        const [line] = (await once(child.stdout, 'data')) as [Buffer]
        const port = Number(line.toString().trim())
        let next = 0
        const measure = async (s: number): Promise<LoadResult> =>
          wrk
            ? runWrk({
                url: `http://127.0.0.1:${port}`,
                seconds: s,
                connections,
                script: join(dir, 'rotate.lua'),
                env: { CATAPI_PATHS: join(dir, 'paths.txt'), CATAPI_AUTH: AUTH }
              })
            : await keepAliveLoad({
                port,
                seconds: s,
                connections,
                request: () =>
                  `GET ${paths[next++ % paths.length]!} HTTP/1.1\r\nHost: bench\r\nAuthorization: ${AUTH}\r\n\r\n`
              })
        // Warm-up: JIT, connections, the first scrypt, and the lookup cache, as in a server that has
        // been running (the run restarts the request list, so its first requests were asked here).
        await measure(WARMUP_SECONDS)
        const cpu0 = cpuSeconds(child.pid!)
        const r = await measure(seconds)
        const cpu = cpuSeconds(child.pid!) - cpu0
        runs.set(subject, [...(runs.get(subject) ?? []), { ...r, cpuUsPerRequest: (cpu * 1e6) / (r.rps * seconds) }])
        child.kill()
        await once(child, 'exit')
      }
    }
    const stats = new Map(
      [...runs].map(([subject, rs]) => {
        const rps = rs.map((r) => r.rps).sort((a, b) => a - b)
        const cpu = rs.map((r) => r.cpuUsPerRequest).sort((a, b) => a - b)
        return [
          subject,
          {
            median: rps[Math.floor(rps.length / 2)]!,
            best: rps[rps.length - 1]!,
            cpu: cpu[Math.floor(cpu.length / 2)]!,
            non2xx: rs.reduce((n, r) => n + r.non2xx, 0)
          }
        ]
      })
    )
    const ceiling = stats.get('uws hello')!
    const mix = process.argv.includes('--uniform') ? 'uniform mix' : 'Zipf mix'
    console.log(
      `node ${process.version}, ${mix}, ${wrk ? 'wrk -t1' : 'node client'}, ${connections} keep-alive connections, ${seconds}s x ${ROUNDS} alternating rounds`
    )
    console.table(
      [...stats].map(([subject, s]) => ({
        subject,
        'median req/s': Math.round(s.median),
        'best req/s': Math.round(s.best),
        'non-2xx': s.non2xx,
        'median vs ceiling': (s.median / ceiling.median).toFixed(2),
        'best vs ceiling': (s.best / ceiling.best).toFixed(2),
        'server CPU µs/req': Number.isNaN(s.cpu) ? '-' : s.cpu.toFixed(1)
      }))
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
