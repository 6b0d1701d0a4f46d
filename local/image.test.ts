import { test, type TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FILTERD, REPO, fakeCollector, rawRequest, startRole, tempDir } from './testing/harness.js'

const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8')

/** The final stage's exec-form instruction, e.g. CMD ["local", "--config", "…"]. */
function execForm (instruction: string): string[] {
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
  const env = { FILTERD_KEY: 'image-key', FILTERD_COLLECTOR_URL: fake.url, FILTERD_LISTEN: '127.0.0.1:0', FILTERD_DB: join(dir, 'db') }
  const local = await startRole(t, cmd[0] as 'local', config, env)
  t.assert.strictEqual(fake.reports[0]?.key, 'image-key')
  const r = await rawRequest(local.port, 'GET', '/stat/')
  t.assert.strictEqual(r.status, 200)
  t.assert.strictEqual((await rawRequest(local.port, 'GET', '/unknown.example')).status, 404)
  t.assert.ok(local.logs.length > 0 && local.logs.every((l) => l.nonJson !== true), 'logs are JSON lines on stdout')
  execFileSync(process.execPath, [join(REPO, 'dist/local/healthcheck.js')], { env: { ...process.env, FILTERD_LISTEN: `127.0.0.1:${local.port}` } })
})

test('the image command line refuses to start when a required variable is unset', (t: TestContext) => {
  const config = join(REPO, execForm('CMD')[2]!.replace(/^\/app\//, ''))
  const env: NodeJS.ProcessEnv = { ...process.env, FILTERD_LISTEN: '127.0.0.1:0', FILTERD_DB: '/nonexistent' }
  delete env.FILTERD_KEY
  let stderr = ''
  try {
    execFileSync(process.execPath, [FILTERD, 'local', '--config', config], { env, stdio: 'pipe' })
  } catch (err) {
    stderr = String((err as { stderr: Buffer }).stderr)
  }
  t.assert.match(stderr, /FILTERD_KEY/)
})
