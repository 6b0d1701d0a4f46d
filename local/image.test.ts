import { test, type TestContext } from 'node:test'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { configOfCommandLine, healthTarget } from './health-target.js'
import { FILTERD, REPO, fakeCollector, rawRequest, startFailureLine, startRole, tempDir } from './testing/harness.js'
import { releasedPort } from '../engine/testing/ports.js'

const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8')

/** The final stage's exec-form instruction, e.g. CMD ["local", "--config", "…"]. */
function execForm(instruction: string): string[] {
  const lines = dockerfile.split('\n').filter((l) => l.startsWith(instruction + ' '))
  return JSON.parse(lines[lines.length - 1]!.slice(instruction.length + 1)) as string[]
}

test('the paths the Dockerfile copies and runs exist in the checkout and the build', (t: TestContext) => {
  for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+)$/gm)) {
    const sources = m[1]!.trim().split(/\s+/).slice(0, -1)
    for (const src of sources) if (src !== '.') t.assert.ok(existsSync(join(REPO, src)), `COPY source ${src}`)
  }
  const entry = execForm('ENTRYPOINT')
  t.assert.deepStrictEqual(entry.slice(0, 1), ['node'])
  t.assert.ok(existsSync(join(REPO, entry[1]!)), entry[1])
  const health = dockerfile.match(/CMD \["node", "([^"]+)"\]/)
  t.assert.ok(health !== null && existsSync(join(REPO, health[1]!)), 'health check script')
  const cmd = execForm('CMD')
  t.assert.strictEqual(cmd[0], 'local')
  t.assert.ok(existsSync(join(REPO, cmd[2]!.replace(/^\/app\//, ''))), cmd[2])
  t.assert.match(dockerfile, /^USER node$/m)
  t.assert.match(dockerfile, /^EXPOSE 80$/m)
  t.assert.match(dockerfile, /npm ci --omit=dev/)
})

test('scripts/image is valid bash that builds, saves and gzips the image', (t: TestContext) => {
  const script = join(REPO, 'scripts/image')
  execFileSync('bash', ['-n', script])
  const text = readFileSync(script, 'utf8')
  t.assert.match(text, /docker build/)
  t.assert.match(text, /docker save "\$tag" \| gzip/)
})

test('the image command line with its default config and environment answers lookups and its health check passes', async (t: TestContext) => {
  const dir = tempDir(t)
  const fake = await fakeCollector(t)
  const cmd = execForm('CMD')
  const config = join(REPO, cmd[2]!.replace(/^\/app\//, ''))
  const env = {
    FILTERD_KEY: 'image-key',
    FILTERD_COLLECTOR_URL: fake.url,
    FILTERD_LISTEN: '127.0.0.1:0',
    FILTERD_DB: join(dir, 'db')
  }
  const local = await startRole(t, cmd[0] as 'local', config, env)
  t.assert.strictEqual(fake.reports[0]?.key, 'image-key')
  const r = await rawRequest(local.port, 'GET', '/stat/')
  t.assert.strictEqual(r.status, 200)
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/unknown.example')).status, 404)
  t.assert.ok(local.logs.length > 0 && local.logs.every((l) => l.nonJson !== true), 'logs are JSON lines on stdout')
  execFileSync(process.execPath, [join(REPO, 'dist/local/healthcheck.js')], {
    env: { ...process.env, FILTERD_LISTEN: `127.0.0.1:${local.port}` }
  })
})

function mountedConfig(dir: string, listen: string, collectorUrl: string): string {
  mkdirSync(join(dir, 'etc'), { recursive: true })
  const file = join(dir, 'etc', 'local.yaml')
  writeFileSync(
    file,
    `local:\n  listen: ${listen}\n  key: k\n  collector-url: ${collectorUrl}\n  db: ${join(dir, 'db')}\n  pid: ${join(dir, 'db', 'local.pid')}\n` +
      `datafiles:\n  cats: ${join(REPO, 'conf')}\n`
  )
  return file
}

test('the health check probes where a mounted config listens, whatever FILTERD_LISTEN says', async (t: TestContext) => {
  const dir = tempDir(t)
  const fake = await fakeCollector(t)
  const port = await releasedPort()
  // The image's default FILTERD_LISTEN stays 0.0.0.0:80 in the environment; the mounted config says otherwise.
  const env = { FILTERD_LISTEN: '127.0.0.1:1' }
  const local = await startRole(t, 'local', mountedConfig(dir, `127.0.0.1:${port}`, fake.url), env)
  t.assert.strictEqual(local.port, port)
  // The service is the container's pid 1; here it is our child, named by FILTERD_HEALTHCHECK_PID.
  const r = spawnSync(process.execPath, [join(REPO, 'dist/local/healthcheck.js')], {
    env: { ...process.env, ...env, FILTERD_HEALTHCHECK_PID: String(local.proc.pid) },
    encoding: 'utf8',
    timeout: 30_000
  })
  t.assert.strictEqual(r.status, 0, r.stderr)
  // Once the service is gone, the same check fails.
  await local.stop()
  const down = spawnSync(process.execPath, [join(REPO, 'dist/local/healthcheck.js')], {
    env: { ...process.env, ...env, FILTERD_HEALTHCHECK_PID: String(local.proc.pid) },
    encoding: 'utf8',
    timeout: 30_000
  })
  t.assert.strictEqual(down.status, 1)
})

test("the health target is local.listen of the config on the service's command line, a relative path read from its directory", async (t: TestContext) => {
  const dir = tempDir(t)
  mountedConfig(dir, '127.0.0.1:30999', 'http://127.0.0.1:9')
  // Stands in for `node dist/tools/filterd.js local --config etc/local.yaml` started in `dir`.
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'local', '--config', 'etc/local.yaml'], {
    cwd: dir,
    stdio: 'ignore'
  })
  t.after(() => {
    child.kill('SIGKILL')
  })
  await once(child, 'spawn')
  const pid = String(child.pid)
  t.assert.deepStrictEqual(healthTarget({ FILTERD_LISTEN: '0.0.0.0:80' }, pid), {
    listen: '127.0.0.1:30999',
    source: `local.listen of ${join(dir, 'etc', 'local.yaml')}`
  })
  // Not the local role's command line (this test process): FILTERD_LISTEN, then the default.
  t.assert.strictEqual(healthTarget({ FILTERD_LISTEN: '127.0.0.1:8080' }, String(process.pid)).listen, '127.0.0.1:8080')
  t.assert.strictEqual(healthTarget({}, String(process.pid)).listen, '0.0.0.0:80')
  t.assert.strictEqual(configOfCommandLine(['node', 'filterd.js', 'local', '--config=/etc/f.yaml']), '/etc/f.yaml')
  t.assert.strictEqual(
    configOfCommandLine(['/sbin/docker-init', '--', 'node', 'filterd.js', 'local', '-c', 'f.yaml']),
    'f.yaml'
  )
  t.assert.strictEqual(configOfCommandLine(['node', 'filterd.js', 'dns', '--config', 'f.yaml']), undefined)
})

/** Runs the image's command line (`filterd local --config …`) to its exit; it is expected to fail at start. */
function runFailing(config: string, env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [FILTERD, 'local', '--config', config], {
    env,
    encoding: 'utf8',
    timeout: 30_000
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('the image command line refuses to start when a required variable is unset, in one JSON log line on stderr', (t: TestContext) => {
  const config = join(REPO, execForm('CMD')[2]!.replace(/^\/app\//, ''))
  const env: NodeJS.ProcessEnv = { ...process.env, FILTERD_LISTEN: '127.0.0.1:0', FILTERD_DB: '/nonexistent' }
  delete env.FILTERD_KEY
  const r = runFailing(config, env)
  t.assert.strictEqual(r.status, 1)
  t.assert.strictEqual(r.stdout, '')
  // What `docker logs` shows and a log collector parses: the role's own JSON shape, level fatal.
  const line = startFailureLine(r.stderr)
  t.assert.deepStrictEqual([line.level, line.role, line.err.code], [60, 'local', 'ENGINE_CONFIG_INVALID'])
  t.assert.match(line.msg ?? '', /^filterd: .*local\.key: environment variable FILTERD_KEY is not set/s)
  t.assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

test('a start failure inside the local role (category names unreadable) is one JSON log line on stderr too', (t: TestContext) => {
  // The image's config file mounted somewhere else: its `cats: ${CONFIG_DIR}/../conf` then names no directory.
  const dir = tempDir(t)
  mkdirSync(join(dir, 'etc'))
  const config = join(dir, 'etc', 'container.yaml')
  copyFileSync(join(REPO, execForm('CMD')[2]!.replace(/^\/app\//, '')), config)
  const env = {
    ...process.env,
    FILTERD_KEY: 'k',
    FILTERD_COLLECTOR_URL: 'http://127.0.0.1:9',
    FILTERD_LISTEN: '127.0.0.1:0',
    FILTERD_DB: join(dir, 'db')
  }
  const r = runFailing(config, env)
  t.assert.strictEqual(r.status, 1)
  const line = startFailureLine(r.stderr)
  t.assert.deepStrictEqual([line.level, line.role], [60, 'local'])
  t.assert.match(line.msg ?? '', new RegExp(`^filterd: .*${join(dir, 'conf').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
  t.assert.strictEqual(existsSync(join(dir, 'db', 'local.pid')), false)
})
