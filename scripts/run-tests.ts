/**
 * `npm test`'s runner: every `dist/**\/*.test.js`, listed here and handed to `node --test` by name, because
 * Node 20 takes a directory (`node --test dist/`) and no glob, while Node 22+ take globs and run a
 * directory argument as if it were a test file (and fail). Options given go to `node --test`; file names
 * given replace the list. `--lane=fast|system|portability` runs one lane (scripts/test-lanes.ts); without
 * it, and without file names, the fast lane runs first and then the system lane: every test.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Lane, LANES, laneFiles, missingPortability } from './test-lanes.js'

const dist = fileURLToPath(new URL('../', import.meta.url))

function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...testFiles(path))
    else if (entry.name.endsWith('.test.js')) out.push(path)
  }
  return out.sort()
}

/**
 * In-process tests mostly wait on their own sockets and files, so three share the two cores well;
 * tests that start daemons and peers compete for the CPU their assertions wait on, so two at a time.
 */
const CONCURRENCY: Record<Lane, number> = { fast: 3, system: 2, portability: 2 }

function runFiles(files: readonly string[], concurrency: number, options: readonly string[]): Promise<number> {
  // Every test file's process makes its result pipe blocking first (scripts/test-preload.ts): with
  // --test-force-exit, results still queued on it were lost.
  const preload = fileURLToPath(new URL('./test-preload.js', import.meta.url))
  const child = spawn(
    process.execPath,
    [
      '--test',
      '--enable-source-maps',
      `--test-concurrency=${concurrency}`,
      '--test-timeout=180000',
      '--test-force-exit',
      `--import=${preload}`,
      ...options,
      ...files.map((f) => relative(process.cwd(), f))
    ],
    { stdio: 'inherit' }
  )
  return new Promise((done) => {
    child.on('exit', (code, signal) => done(code ?? (signal === null ? 1 : 128)))
  })
}

function laneOf(arg: string): Lane {
  const lane = arg.slice('--lane='.length)
  if (!(LANES as readonly string[]).includes(lane)) throw new Error(`unknown lane ${lane}: one of ${LANES.join(', ')}`)
  return lane as Lane
}

async function main(): Promise<number> {
  const args = process.argv.slice(2)
  const laneArg = args.find((a) => a.startsWith('--lane='))
  const options = args.filter((a) => a.startsWith('-') && !a.startsWith('--lane='))
  const named = args.filter((a) => !a.startsWith('-'))
  if (named.length > 0) return runFiles(named, CONCURRENCY.system, options)
  const all = testFiles(dist)
  const missing = missingPortability(all, dist)
  if (missing.length > 0) {
    console.error(`scripts/test-lanes.ts names tests that do not exist: ${missing.join(', ')}`)
    return 1
  }
  const lanes: Lane[] = laneArg === undefined ? ['fast', 'system'] : [laneOf(laneArg)]
  let code = 0
  for (const lane of lanes) {
    const files = laneFiles(lane, all, dist)
    console.log(`# lane ${lane}: ${files.length} test files`)
    code = Math.max(code, await runFiles(files, CONCURRENCY[lane], options))
  }
  return code
}

process.exitCode = await main()
