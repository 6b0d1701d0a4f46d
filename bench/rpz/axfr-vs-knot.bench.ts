/**
 * RPZ out over the wire: a full AXFR of an N-name category zone from the rpz role, against Knot DNS
 * (knotd, Debian) serving the same zone as a plain primary, in the same run:
 * `node dist/bench/rpz/axfr-vs-knot.bench.js [names] [rounds]`.
 *
 * Builds a category database of N names in category 7, starts `filterd rpz` on it, takes the zone once
 * with kdig and gives that very text to knotd as its zone file, then times `kdig axfr` against each
 * server in turns. Prints per server the best and median seconds, records and megabytes per second.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Store } from '../../engine/store/index.js'
import { CategoryDbBuilder } from '../../engine/catdb/index.js'
import { FILTERD } from '../../engine/testing/daemon.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { until } from '../../engine/testing/wait.js'

const run = promisify(execFile)
const names = Number(process.argv[2] ?? 1_000_000)
const rounds = Number(process.argv[3] ?? 3)
const ZONE = 'cat-7.rpz.filterd'
const children: ChildProcess[] = []

async function buildStore(dir: string): Promise<void> {
  const store = Store.open(join(dir, 'db'))
  const b = await CategoryDbBuilder.begin(store, {})
  for (let i = 0; i < names; i++) await b.put(`site-${i.toString(36)}.example${i % 50}.com`, false, [7])
  await b.commit()
  await store.close()
}

function start(cmd: string, args: string[]): ChildProcess {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] })
  children.push(proc)
  return proc
}

function recordCount(text: string): number {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith(';')).length
}

async function axfr(port: number): Promise<{ seconds: number; bytes: number; text: string }> {
  const t = performance.now()
  const { stdout } = await run('kdig', ['@127.0.0.1', '-p', String(port), ZONE, 'AXFR', '+nocomments', '+timeout=60'], {
    maxBuffer: 1024 * 1024 * 1024
  })
  return { seconds: (performance.now() - t) / 1000, bytes: Buffer.byteLength(stdout), text: stdout }
}

function knotConf(dir: string, port: number): string {
  return (
    `server:\n  listen: 127.0.0.1@${port}\n  rundir: "${dir}"\n  background-workers: 1\n  udp-workers: 1\n  tcp-workers: 1\n` +
    `database:\n  storage: "${join(dir, 'kdb')}"\nacl:\n  - id: xfr\n    address: 127.0.0.0/8\n    action: transfer\n` +
    `log:\n  - target: stderr\n    any: warning\nzone:\n  - domain: ${ZONE}\n    file: "${join(dir, 'zone.txt')}"\n` +
    `    storage: "${dir}"\n    acl: xfr\n    zonefile-sync: -1\n    journal-content: none\n`
  )
}

function summary(times: number[], records: number, megabytes: number): Record<string, number> {
  const sorted = [...times].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  return {
    bestSeconds: +sorted[0]!.toFixed(2),
    medianSeconds: +median.toFixed(2),
    recordsPerSecond: Math.round(records / median),
    textMegabytesPerSecond: +(megabytes / median).toFixed(1)
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'filterd-axfr-bench-'))
  try {
    let t = performance.now()
    await buildStore(dir)
    const buildSeconds = (performance.now() - t) / 1000
    const [dnsPort, httpPort, knotPort] = [await releasedPort(), await releasedPort(), await releasedPort()]
    const conf = join(dir, 'filterd.yaml')
    writeFileSync(
      conf,
      `common:\n  db: ${JSON.stringify(join(dir, 'db'))}\nrpz:\n  enabled: true\n  listen: 127.0.0.1:${dnsPort}\n` +
        `  metrics-listen: 127.0.0.1:${httpPort}\n  block-cname: block.isp.example\n  log: ${JSON.stringify(join(dir, 'rpz.log'))}\n` +
        `  pid: ${JSON.stringify(join(dir, 'rpz.pid'))}\n`
    )
    t = performance.now()
    start(process.execPath, [FILTERD, 'rpz', '--config', conf])
    await until(
      'the rpz role serves the zone',
      async () => {
        const res = await fetch(`http://127.0.0.1:${httpPort}/zones`).catch(() => undefined)
        return res !== undefined && (await res.text()).includes(ZONE)
      },
      600_000,
      200
    )
    const rpzStartSeconds = (performance.now() - t) / 1000
    const first = await axfr(dnsPort)
    writeFileSync(join(dir, 'zone.txt'), first.text)
    const records = recordCount(first.text)
    mkdirSync(join(dir, 'kdb'))
    writeFileSync(join(dir, 'knot.conf'), knotConf(dir, knotPort))
    t = performance.now()
    start('knotd', ['-c', join(dir, 'knot.conf')])
    await until(
      'knotd serves the zone',
      async () => {
        // kdig fails while knotd still loads the zone (no answer yet).
        const args = ['@127.0.0.1', '-p', String(knotPort), ZONE, 'SOA', '+short']
        const out = await run('kdig', args).catch(() => undefined)
        return out !== undefined && out.stdout.trim() !== ''
      },
      600_000,
      500
    )
    const knotLoadSeconds = (performance.now() - t) / 1000
    const filterdTimes: number[] = []
    const knotTimes: number[] = []
    let knotRecords = 0
    for (let i = 0; i < rounds; i++) {
      filterdTimes.push((await axfr(dnsPort)).seconds)
      const k = await axfr(knotPort)
      knotTimes.push(k.seconds)
      knotRecords = recordCount(k.text)
    }
    const mb = first.bytes / 1e6
    console.log(
      JSON.stringify({
        names,
        records,
        rounds,
        catdbBuildSeconds: +buildSeconds.toFixed(1),
        rpzStartSeconds: +rpzStartSeconds.toFixed(1),
        knotLoadSeconds: +knotLoadSeconds.toFixed(1),
        knotRecords,
        filterd: summary(filterdTimes, records, mb),
        knot: summary(knotTimes, records, mb)
      })
    )
  } finally {
    for (const c of children) c.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 500))
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
