/**
 * build-db at scale: build time, database size and peak memory for
 *   - the UT1 lists (imported with `filterd import ut1`), when ../shared/data/ut1 is present;
 *   - a synthetic set of N names (default 5,000,000), always.
 * Each build runs the real CLI as a child process under /usr/bin/time -v, so the figures are the
 * whole process's, as an operator would see them.
 *
 *   node dist/bench/catdb/build.bench.js [names=5000000]
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { once } from 'node:events'
import { loadTaxonomy } from '../../engine/categories/index.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const cli = join(root, 'dist/tools/filterd.js')
const ut1 = join(root, '../shared/data/ut1')
const names = Number(process.argv[2] ?? 5_000_000)

function dirSize(dir: string): number {
  let total = 0
  for (const f of readdirSync(dir)) total += statSync(join(dir, f)).size
  return total
}

interface Measured {
  wallS: number
  peakMiB: number
  dbMiB: number
  stdout: string
}

function measure(args: string[], dbDir: string): Measured {
  const started = process.hrtime.bigint()
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, cli, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024
  })
  if (r.status !== 0) throw new Error(`build failed:\n${r.stdout}\n${r.stderr}`)
  const wallS = Number(process.hrtime.bigint() - started) / 1e9
  // /usr/bin/time -v reports the peak resident set of the build process in KiB.
  const peak = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)
  return {
    wallS,
    peakMiB: peak === null ? NaN : Math.round(Number(peak[1]) / 1024),
    dbMiB: dirSize(dbDir) / 1048576,
    stdout: r.stdout
  }
}

function config(dir: string, dataDir: string, file: string): string {
  const path = join(dir, 'bench.yaml')
  writeFileSync(
    path,
    `datafiles:\n  path: ${dataDir}\n  file: [${file}]\n  cats: ${join(root, 'conf')}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}\n`
  )
  return path
}

async function synthetic(dir: string, n: number): Promise<string> {
  const path = join(dir, 'synthetic.txt')
  const out = createWriteStream(path)
  const tlds = ['com', 'net', 'org', 'ru', 'de', 'info', 'io', 'co.uk']
  const cats = loadTaxonomy(join(root, 'conf'), 'en').numbers.filter((c) => c !== 0)
  let x = 0x2545f491
  for (let i = 0; i < n; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    const r = x >>> 0
    const host = i % 7 === 0 ? `cdn${r % 97}.` : ''
    const line = `${host}s${i.toString(36)}${(r % 1000).toString(36)}.${tlds[r % tlds.length]} ${cats[r % cats.length]}\n`
    if (!out.write(line)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
  return path
}

async function main(): Promise<void> {
  const rows: string[] = []
  const dir = mkdtempSync(join(tmpdir(), 'filterd-build-bench-'))
  try {
    if (existsSync(ut1)) {
      const data = join(dir, 'ut1data')
      execFileSync(process.execPath, [cli, 'import', 'ut1', ut1, '--out', join(dir, 'ut1.txt')], { stdio: 'ignore' })
      execFileSync('mkdir', ['-p', data])
      execFileSync('mv', [join(dir, 'ut1.txt'), join(data, 'ut1.txt')])
      const m = measure(['build-db', '--config', config(dir, data, 'ut1.txt'), '--continue'], join(dir, 'db'))
      const count = /active: (\d+) domains, (\d+) URLs/.exec(m.stdout)
      rows.push(
        `| UT1 (import + build) | ${count?.[1]} domains + ${count?.[2]} URLs | ${m.wallS.toFixed(1)} s | ${m.dbMiB.toFixed(0)} MiB | ${Number.isNaN(m.peakMiB) ? 'n/a' : m.peakMiB + ' MiB'} |`
      )
      rmSync(join(dir, 'db'), { recursive: true, force: true })
    } else {
      rows.push('| UT1 | ../shared/data/ut1 not present: skipped | | | |')
    }
    const data = join(dir, 'syn')
    execFileSync('mkdir', ['-p', data])
    await synthetic(data, names)
    const m = measure(['build-db', '--config', config(dir, data, 'synthetic.txt')], join(dir, 'db'))
    const count = /active: (\d+) domains/.exec(m.stdout)
    rows.push(
      `| synthetic | ${count?.[1]} domains | ${m.wallS.toFixed(1)} s | ${m.dbMiB.toFixed(0)} MiB | ${Number.isNaN(m.peakMiB) ? 'n/a' : m.peakMiB + ' MiB'} |`
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.stdout.write(
    `node ${process.version}\n| input | entries | build time | database size | peak RSS |\n|---|---|---|---|---|\n${rows.join('\n')}\n`
  )
}

await main()
