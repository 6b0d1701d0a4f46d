import { test, type TestContext } from 'node:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Store } from '../../engine/store/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import { runCli, startFailureLine } from '../../engine/testing/daemon.js'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { spawn } from 'node:child_process'
import { writeTaxonomy } from '../../api/testing/fixtures.js'
import { tempDir as makeDir } from '../../engine/testing/temp.js'

const tempDir = (t: TestContext): string => makeDir(t, 'filterd-cli-')

const conf = fileURLToPath(new URL('../../../conf/', import.meta.url))

test('--help lists every role and command', async (t: TestContext) => {
  const { code, stdout } = await runCli(['--help'])
  t.assert.strictEqual(code, 0)
  for (const word of [
    'dns',
    'blockpage',
    'api',
    'catapi',
    'local',
    'collector',
    'all',
    'build-db',
    'import',
    'stats-import',
    'client'
  ]) {
    t.assert.match(stdout, new RegExp(`\\b${word}\\b`))
  }
})

test("--help names every option of redis-seed's own usage, --detach too", async (t: TestContext) => {
  const { stdout } = await runCli(['--help'])
  const line = stdout.split('\n').find((l) => /^ +redis-seed /.test(l)) ?? ''
  const own = await runCli(['redis-seed', '--help'])
  const usage = own.stdout + own.stderr
  const options = [...new Set(usage.match(/--[a-z][a-z-]*/g) ?? [])].filter((o) => o !== '--help')
  t.assert.ok(options.includes('--detach'), usage)
  for (const o of options) t.assert.ok(line.includes(o), `filterd --help lacks ${o}: ${line}`)
})

test('every role and command answers --help with its usage and exit 0, and --version names the version', async (t: TestContext) => {
  const names = [
    'dns',
    'blockpage',
    'api',
    'catapi',
    'local',
    'collector',
    'all',
    'check-config',
    'build-db',
    'import',
    'stats-import',
    'client',
    'collector-usage',
    'backup',
    'restore'
  ]
  const runs = await Promise.all([
    ...names.map((n) => runCli([n, '--help'])),
    runCli(['client', 'add', '--help']),
    runCli(['collector', 'usage', '--help'])
  ])
  for (const [i, r] of runs.entries()) {
    t.assert.strictEqual(r.code, 0, `${names[i] ?? 'client add / collector usage'} --help: ${r.stderr}`)
    t.assert.match(r.stdout, /usage/i)
  }
  const v = await runCli(['--version'])
  t.assert.strictEqual(v.code, 0)
  t.assert.match(v.stdout, /^filterd \d+\.\d+\.\d+ \(Node\.js /)
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  t.assert.strictEqual(v.stdout, `filterd ${pkg.version} (Node.js ${process.versions.node})\n`)
  const bad = await runCli(['api', '--config'])
  t.assert.strictEqual(bad.code, 2)
  t.assert.match(bad.stderr, /--config/)
})

test('an unknown role is refused with usage and exit code 2', async (t: TestContext) => {
  const { code, stderr } = await runCli(['resolver'])
  t.assert.strictEqual(code, 2)
  t.assert.match(stderr, /unknown role or command "resolver"/)
})

test("a bad config stops a role's start with one fatal JSON log line on stderr naming the key", async (t: TestContext) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'bad.yaml'), 'proxy:\n  blockpage-ip: [192.0.2.1, 192.0.2.2]\n')
  const { code, stdout, stderr } = await runCli(['dns', '--config', join(dir, 'bad.yaml')])
  t.assert.strictEqual(code, 1)
  t.assert.strictEqual(stdout, '')
  const line = startFailureLine(stderr)
  t.assert.deepStrictEqual([line.level, line.role, line.err.code], [60, 'dns', 'ENGINE_CONFIG_INVALID'])
  t.assert.match(line.msg ?? '', /^filterd: .*proxy\.blockpage-ip\[1\]: .*one per IP version/s)
})

test('commands other than roles keep plain-text errors', async (t: TestContext) => {
  const { code, stderr } = await runCli(['build-db', '--config', join(tempDir(t), 'missing.yaml')])
  t.assert.notStrictEqual(code, 0)
  t.assert.throws(() => JSON.parse(stderr.split('\n')[0]!))
})

function dataConfig(dir: string, files: Record<string, string>): string {
  mkdirSync(join(dir, 'data'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'data', name), text)
  const yaml = `datafiles:\n  path: ${join(dir, 'data')}\n  file: [${Object.keys(files).join(', ')}]\n  cats: ${conf}\n  language: en\ncommon:\n  db: ${join(dir, 'db')}\n`
  writeFileSync(join(dir, 'f.yaml'), yaml)
  return join(dir, 'f.yaml')
}

test('build-db compiles the layers and prints counts per layer and per category of the built database', async (t: TestContext) => {
  const dir = tempDir(t)
  // custom.txt overrides casino.example (40 → 30) and deletes news.example (81): the layer lines
  // count every file's own lines, the category line only what was built.
  const config = dataConfig(dir, {
    'custom.txt': 'casino.example 30\nnews.example -\n',
    'vendor.txt': 'casino.example 40\nnews.example 81\nsport.example 81\nexample.com/Games 52\nкремль.рф 85\n'
  })
  const { code, stdout } = await runCli(['build-db', '--config', config])
  t.assert.strictEqual(code, 0, stdout)
  t.assert.match(stdout, /layer 1 custom\.txt: 1 entries \(0 URL\), 1 deletions, 0 errors/)
  t.assert.match(stdout, /layer 2 vendor\.txt: 5 entries \(1 URL\), 0 deletions, 0 errors/)
  t.assert.match(stdout, /version 1 active: 3 domains, 1 URLs/)
  const perCategory = stdout.split('\n').find((l) => l.startsWith('entries per category'))
  t.assert.strictEqual(
    perCategory,
    'entries per category (built database): 30 Gambling: 1; 52 Games: 1; 81 News and media: 1; 85 Government: 1'
  )
  const store = Store.open(join(dir, 'db'))
  t.after(() => store.close())
  const db = new CategoryDb(store)
  t.assert.deepStrictEqual(db.categorize('www.casino.example'), { domain: 'casino.example', categories: [30] })
  t.assert.strictEqual(db.categorize('news.example'), undefined)
  t.assert.deepStrictEqual(db.categorize('xn--e1ajeds9e.xn--p1ai')?.categories, [85])
})

test('build-db reports malformed lines with file and line and keeps the live database', async (t: TestContext) => {
  const dir = tempDir(t)
  const config = dataConfig(dir, { 'custom.txt': 'good.example 30\nbad..name 30\nother.example 9999\n' })
  const { code, stdout } = await runCli(['build-db', '--config', config])
  t.assert.strictEqual(code, 1)
  t.assert.match(stdout, /error: custom\.txt:2: /)
  t.assert.match(stdout, /error: custom\.txt:3: /)
  t.assert.match(stdout, /live database is unchanged/)
  const again = await runCli(['build-db', '--config', config, '--continue'])
  t.assert.strictEqual(again.code, 0)
  t.assert.match(again.stdout, /version \d+ active: 1 domains/)
})

test('a role that cannot bind says so in one line naming the address', async (t: TestContext) => {
  const dir = tempDir(t)
  writeTaxonomy(join(dir, 'cats'))
  const holder = createServer()
  holder.listen(0, '127.0.0.1')
  await once(holder, 'listening')
  t.after(() => {
    holder.close()
  })
  const port = (holder.address() as { port: number }).port
  writeFileSync(
    join(dir, 'f.yaml'),
    [
      'datafiles:',
      `  cats: ${join(dir, 'cats')}`,
      'common:',
      `  db: ${join(dir, 'db')}`,
      'api:',
      `  listen: 127.0.0.1:${port}`,
      `  pid: ${join(dir, 'api.pid')}`,
      '  log: "-"'
    ].join('\n')
  )
  const { code, stderr } = await runCli(['api', '--config', join(dir, 'f.yaml')])
  t.assert.strictEqual(code, 1)
  const line = startFailureLine(stderr)
  t.assert.strictEqual(line.err.code, 'ENGINE_LISTEN')
  t.assert.match(line.msg ?? '', new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: address already in use`))
})

test('a second filterd all with a role still running reports ENGINE_ALREADY_RUNNING in one line, binding nothing', async (t: TestContext) => {
  const dir = tempDir(t)
  // A process whose command line reads `filterd dns` stands in for the first filterd all's DNS server.
  const first = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'filterd', 'dns'], { stdio: 'ignore' })
  t.after(() => {
    first.kill('SIGKILL')
  })
  await once(first, 'spawn')
  writeFileSync(join(dir, 'dns.pid'), `${first.pid}\n`)
  writeFileSync(
    join(dir, 'f.yaml'),
    ['proxy:', `  pid: ${join(dir, 'dns.pid')}`, 'demo:', '  upstream: 127.0.0.1:1'].join('\n')
  )
  const { code, stdout, stderr } = await runCli(['all', '--config', join(dir, 'f.yaml')])
  t.assert.strictEqual(code, 1)
  t.assert.strictEqual(stdout, '')
  t.assert.match(
    stderr,
    new RegExp(`^filterd: filterd all: ENGINE_ALREADY_RUNNING: dns is already running with pid ${first.pid} .*\n$`)
  )
})
