/**
 * RPZ out, end to end: an API write until a BIND consumer blocks the new name (the api role writes,
 * the rpz role sees the generation, sends NOTIFY, BIND takes the IXFR):
 * `node dist/bench/rpz/write-to-bind.bench.js [writes]`.
 *
 * Starts the api and rpz roles on one store, `named` (Debian's BIND 9) with global.rpz.filterd as a
 * secondary zone in response-policy, and a stub upstream; then, one write at a time, POSTs a new name
 * to /blacklist/ and asks BIND for it every 10 ms over UDP until the answer is the block address.
 * Prints p50, p99 and max milliseconds.
 */
import { createSocket } from 'node:dgram'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { startStubResolver } from '../../engine/upstream-stub/index.js'
import { CONF, startRole } from '../../engine/testing/daemon.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { until } from '../../engine/testing/wait.js'
import { query } from '../../engine/wire/testing/build.js'
import { startBind } from '../../rpz/testing/consumers.js'

const writes = Number(process.argv[2] ?? 50)
const BLOCK_IP = Buffer.from([192, 0, 2, 80])
const cleanups: Array<() => unknown> = []
// The helpers clean up through a test's after(); here the bench runs them itself at the end.
const ctx = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext

/** True when BIND answers `name` with the block address (one UDP query, 500 ms at most). */
function blocked(port: number, name: string): Promise<boolean> {
  const sock = createSocket('udp4')
  return new Promise((resolve) => {
    const done = (v: boolean): void => {
      clearTimeout(timer)
      sock.close()
      resolve(v)
    }
    const timer = setTimeout(() => done(false), 500)
    sock.on('message', (raw) => done(raw.includes(BLOCK_IP)))
    sock.send(query(name, 'A'), port, '127.0.0.1')
  })
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'filterd-rpz-bind-bench-'))
  try {
    const stub = await startStubResolver({ a: '198.51.100.10' })
    cleanups.push(() => stub.close())
    const [dnsPort, httpPort, bindPort] = [await releasedPort(), await releasedPort(), await releasedPort()]
    const file = join(dir, 'filterd.json')
    writeFileSync(
      file,
      JSON.stringify({
        common: { db: join(dir, 'db'), 'log-level': 'warn' },
        datafiles: { path: dir, cats: CONF, language: 'en' },
        stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
        proxy: { 'blockpage-ip': ['192.0.2.80'] },
        api: { listen: '127.0.0.1:0', log: '-', pid: join(dir, 'api.pid') },
        lists: { refresh: false },
        rpz: {
          enabled: true,
          listen: `127.0.0.1:${dnsPort}`,
          'metrics-listen': `127.0.0.1:${httpPort}`,
          notify: [`127.0.0.1:${bindPort}`],
          log: '-',
          pid: join(dir, 'rpz.pid')
        }
      })
    )
    const api = await startRole(ctx, 'api', file)
    await startRole(ctx, 'rpz', file)
    mkdirSync(join(dir, 'bind'))
    const bind = startBind(ctx, {
      dir: join(dir, 'bind'),
      port: bindPort,
      primaryPort: dnsPort,
      zones: ['global.rpz.filterd'],
      forwarder: stub.port
    })
    const post = async (name: string): Promise<void> => {
      const res = await fetch(`${api.url}/blacklist/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([name])
      })
      if (!res.ok) throw new Error(`POST /blacklist/ answered ${res.status}`)
    }
    await post('warm-up.example')
    await until('BIND holds the zone', () => blocked(bindPort, 'warm-up.example'), 120_000, 200)
    const ms: number[] = []
    for (let i = 0; i < writes; i++) {
      const name = `write-${i}.example`
      const t = performance.now()
      await post(name)
      await until(`BIND blocks ${name}`, () => blocked(bindPort, name), 60_000, 10).catch(async (err: Error) => {
        const zones = await (await fetch(`http://127.0.0.1:${httpPort}/zones`)).text()
        throw new Error(`${err.message}; rpz zones ${zones}; BIND said: ${bind.output().slice(-3000)}`)
      })
      ms.push(performance.now() - t)
    }
    const sorted = [...ms].sort((a, b) => a - b)
    console.log(
      JSON.stringify({
        writes,
        p50Ms: Math.round(percentile(sorted, 50)),
        p99Ms: Math.round(percentile(sorted, 99)),
        maxMs: Math.round(sorted[sorted.length - 1]!)
      })
    )
  } finally {
    for (const fn of cleanups.reverse()) await fn()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
