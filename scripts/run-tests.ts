/**
 * `npm test`'s runner: every `dist/**\/*.test.js`, listed here and handed to `node --test` by name, because
 * Node 20 takes a directory (`node --test dist/`) and no glob, while Node 22+ take globs and run a
 * directory argument as if it were a test file (and fail). Options given go to `node --test`; file names given replace the list.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const dist = fileURLToPath(new URL('../', import.meta.url))

function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...testFiles(path))
    else if (entry.name.endsWith('.test.js')) out.push(path)
  }
  return out
}

// Arguments starting with `-` go to `node --test`; others name the test files to run instead of all.
const args = process.argv.slice(2)
const options = args.filter((a) => a.startsWith('-'))
const named = args.filter((a) => !a.startsWith('-'))
const files =
  named.length > 0
    ? named
    : testFiles(dist)
        .map((f) => relative(process.cwd(), f))
        .sort()
// Every test file's process makes its result pipe blocking first (scripts/test-preload.ts): with
// --test-force-exit, results still queued on it were lost.
const preload = fileURLToPath(new URL('./test-preload.js', import.meta.url))
const child = spawn(
  process.execPath,
  [
    '--test',
    '--enable-source-maps',
    '--test-concurrency=2',
    '--test-timeout=180000',
    '--test-force-exit',
    `--import=${preload}`,
    ...options,
    ...files
  ],
  { stdio: 'inherit' }
)
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128)
})
