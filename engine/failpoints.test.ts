// Failpoints (engine/failpoints.ts): named, carried to a child process by one environment variable, and the
// only way the statistics read a test hook.
import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { FAILPOINT_ENV, failpoint, failpointEnv, failpointNumber, setFailpoint } from './failpoints.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const module = new URL('./failpoints.js', import.meta.url).href

test('a failpoint set in this process is read by its name and cleared again', (t: TestContext) => {
  t.after(() => setFailpoint('stats.fold.step-ms', undefined))
  t.assert.strictEqual(failpoint('stats.fold.step-ms'), undefined)
  setFailpoint('stats.fold.step-ms', '0')
  setFailpoint('stats.month.build', 'off')
  t.assert.strictEqual(failpointNumber('stats.fold.step-ms'), 0)
  t.assert.strictEqual(failpoint('stats.month.build'), 'off')
  setFailpoint('stats.month.build', undefined)
  t.assert.strictEqual(process.env[FAILPOINT_ENV], 'stats.fold.step-ms=0')
})

test('a misspelt failpoint is refused rather than testing nothing', (t: TestContext) => {
  const before = process.env[FAILPOINT_ENV]
  t.after(() => {
    if (before === undefined) delete process.env[FAILPOINT_ENV]
    else process.env[FAILPOINT_ENV] = before
  })
  process.env[FAILPOINT_ENV] = 'stats.fold.stepms=0'
  t.assert.throws(() => failpoint('stats.fold.step-ms'), /unknown failpoint "stats.fold.stepms"/)
})

test('a child started with failpointEnv stops where the failpoint says, printing its line', async (t: TestContext) => {
  const code =
    `const f = await import(${JSON.stringify(module)});` +
    `if (f.failpoint('stats.fold.pause') === '1') f.stopHere('PAUSED fold ' + f.failpoint('stats.import.chunk-rows'));` +
    `console.log('not stopped')`
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, ...failpointEnv({ 'stats.fold.pause': '1', 'stats.import.chunk-rows': '50' }) },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let stdout = ''
  const closed = new Promise<string | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)))
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s
    if (stdout.includes('\n')) child.kill('SIGKILL')
  })
  t.assert.strictEqual(await closed, 'SIGKILL')
  t.assert.strictEqual(stdout, 'PAUSED fold 50\n')
})

/** Product code (no test, no testing/ helper) of an engine folder. */
function productFiles(folder: string): string[] {
  return readdirSync(`${root}${folder}`, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.split('/').includes('testing')
  )
}

test('the statistics and the query log read no environment variable: their test hooks are failpoints', (t: TestContext) => {
  const readers = ['engine/stats', 'engine/querylog', 'engine/replica'].flatMap((folder) =>
    productFiles(folder)
      .filter((f) => /process\.env\b/.test(readFileSync(`${root}${folder}/${f}`, 'utf8')))
      .map((f) => `${folder}/${f}`)
  )
  t.assert.deepStrictEqual(readers, [])
})
