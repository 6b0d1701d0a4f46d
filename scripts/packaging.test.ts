// What ships to operators besides the code: the systemd units (packaging/systemd), the container
// image's Dockerfile, the release archive (scripts/release), LICENSE and CHANGELOG.md.
// docs/install.md itself is followed by scripts/install.test.ts.
import { test, type TestContext } from 'node:test'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type RoleName } from '../engine/config/index.js'
import { parseConfig } from '../engine/features.js'
import { REPO, startRole } from '../engine/testing/daemon.js'
import { httpRequest } from '../engine/testing/http.js'
import { releasedPort } from '../engine/testing/ports.js'
import { tempDir } from '../engine/testing/temp.js'
import { ROLE_NAMES, sectionOf } from '../tools/cli/roles.js'

const read = (path: string): string => readFileSync(join(REPO, path), 'utf8')
const pkg = JSON.parse(read('package.json')) as { version: string; license?: string }

/** `Key=value` lines of a unit file (a key given several times: every value). */
function unitKeys(text: string): Map<string, string[]> {
  const keys = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line)
    if (m !== null) keys.set(m[1]!, [...(keys.get(m[1]!) ?? []), m[2]!])
  }
  return keys
}

test("filterd@.service runs every role as filterd, with the port capability, the spec's folders and restart on failure", (t: TestContext) => {
  const unit = read('packaging/systemd/filterd@.service')
  const k = unitKeys(unit)
  const one = (key: string): string | undefined => k.get(key)?.[0]
  t.assert.deepStrictEqual([one('User'), one('Group')], ['filterd', 'filterd'])
  t.assert.strictEqual(one('AmbientCapabilities'), 'CAP_NET_BIND_SERVICE')
  t.assert.strictEqual(one('CapabilityBoundingSet'), 'CAP_NET_BIND_SERVICE')
  t.assert.strictEqual(one('Restart'), 'on-failure')
  // A role other than dns is started again for as long as it fails, one attempt every 10 s: a cause
  // that goes away (a full disk) needs no reset-failed, and no other unit waits on it.
  t.assert.deepStrictEqual(
    [one('StartLimitIntervalSec'), one('StartLimitBurst'), one('RestartSec')],
    ['0', undefined, '10s']
  )
  t.assert.ok(!/^(Requires|BindsTo|Requisite)=/m.test(unit), 'no role needs another running')
  t.assert.strictEqual(
    one('ExecStartPre'),
    '/usr/bin/env node /opt/filterd/dist/tools/filterd.js check-config --config /etc/filterd/filterd.yaml',
    'the config and the folders are checked as filterd before each start'
  )
  t.assert.strictEqual(one('ExecReload'), '/bin/kill -HUP $MAINPID')
  // The dns instance comes back after 200 ms, within its own start limit.
  const dns = unitKeys(read('packaging/systemd/filterd@dns.service.d/restart.conf'))
  t.assert.deepStrictEqual(
    [dns.get('RestartSec')?.[0], dns.get('StartLimitIntervalSec')?.[0], dns.get('StartLimitBurst')?.[0]],
    ['200ms', '1min', '10']
  )
  t.assert.strictEqual(
    one('RuntimeDirectoryPreserve'),
    'yes',
    'stopping one role must not remove the pid files of the others'
  )
  t.assert.strictEqual(
    one('ExecStart'),
    '/usr/bin/env node /opt/filterd/dist/tools/filterd.js %i --config /etc/filterd/filterd.yaml'
  )
  t.assert.ok(k.get('WantedBy')?.includes('filterd.target'))
  // Node's JIT writes executable memory: this hardening option would kill every role at start.
  t.assert.ok(!k.has('MemoryDenyWriteExecute'))
  t.assert.match(read('packaging/sysusers.d/filterd.conf'), /^u filterd - .* \/var\/lib\/filterd /m)

  // Every path a role writes by default lies in a folder the unit creates for the filterd user.
  const run = `/run/${one('RuntimeDirectory') ?? ''}/`
  const state = `/var/lib/${one('StateDirectory') ?? ''}/`
  const logs = `/var/log/${one('LogsDirectory') ?? ''}/`
  const d = parseConfig('', '/etc/filterd/filterd.yaml')
  for (const role of ROLE_NAMES) {
    const section = sectionOf(d, role)
    t.assert.ok(section.pid.startsWith(run), `${role} pid ${section.pid} under ${run}`)
    if (section.log !== undefined) t.assert.ok(section.log.startsWith(logs), `${role} log ${section.log} under ${logs}`)
  }
  for (const [key, path] of Object.entries({
    'common.db': d.common.db,
    'stats.db': d.stats.db,
    'stats.dir': d.stats.dir,
    'datafiles.path': d.datafiles.path,
    'local.db': d.local.db,
    'collector.db': d.collector.db,
    'collector.snapshots': d.collector.snapshots
  })) {
    t.assert.ok(path.startsWith(state), `${key} ${path} under ${state}`)
  }
  // The unit's comment and docs/install.md name every role as an instance.
  const install = read('docs/install.md')
  for (const role of [...ROLE_NAMES, 'all']) {
    t.assert.match(unit, new RegExp(`filterd@${role}\\b`), `unit comment names filterd@${role}`)
    t.assert.match(install, new RegExp(`filterd@${role}\\b`), `docs/install.md names filterd@${role}`)
  }
})

test(
  'systemd-analyze verify accepts the units',
  {
    skip:
      spawnSync('sh', ['-c', 'command -v systemd-analyze']).status !== 0 && process.env.CI !== 'true'
        ? 'systemd-analyze is missing (apt-get install systemd)'
        : false
  },
  (t: TestContext) => {
    // The template's ExecStart names /opt/filterd, which need not exist for verify (only /usr/bin/env must).
    const dir = join(REPO, 'packaging/systemd')
    const r = spawnSync(
      'systemd-analyze',
      [
        'verify',
        '--man=no',
        join(dir, 'filterd@.service'),
        join(dir, 'filterd.target'),
        join(dir, 'filterd-backup.service'),
        join(dir, 'filterd-backup.timer')
      ],
      { encoding: 'utf8' }
    )
    // The only line: the sync instance ordered after itself, which systemd drops (docs/install.md).
    const problems = (r.stdout + r.stderr)
      .split('\n')
      .filter((l) => l !== '' && !/filterd@sync\.service: Dependency After=filterd@sync\.service is dropped/.test(l))
    t.assert.deepStrictEqual(problems, [])
    t.assert.strictEqual(r.status, 0)
    // The dns instance with its drop-in (filterd@dns.service.d/), found through the unit path as installed.
    const d = spawnSync('systemd-analyze', ['verify', '--man=no', join(dir, 'filterd@dns.service')], {
      encoding: 'utf8',
      env: { ...process.env, SYSTEMD_UNIT_PATH: `${dir}:` }
    })
    t.assert.deepStrictEqual(
      (d.stdout + d.stderr)
        .split('\n')
        .filter((l) => l !== '' && !/Dependency After=filterd@sync\.service is dropped/.test(l)),
      []
    )
    t.assert.strictEqual(d.status, 0)
  }
)

const dockerfile = read('Dockerfile')

/** The final stage's instructions (after the last FROM). */
function finalStage(): string[] {
  const lines = dockerfile.split('\n')
  const last =
    lines
      .map((l, i) => (l.startsWith('FROM ') ? i : -1))
      .filter((i) => i >= 0)
      .pop() ?? 0
  return lines.slice(last)
}

test('the image builds on a supported Node LTS and takes the role as its argument', (t: TestContext) => {
  const froms = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]))
  t.assert.ok(froms.length >= 1)
  for (const major of froms)
    t.assert.ok(major >= 22 && major % 2 === 0, `node:${major}: an LTS line still supported (22 or newer)`)
  t.assert.strictEqual(new Set(froms).size, 1, 'every stage on the same Node (the addon is built by the build stage)')
  const exec = (name: string): string[] =>
    JSON.parse(
      finalStage()
        .find((l) => l.startsWith(name + ' '))!
        .slice(name.length + 1)
    ) as string[]
  t.assert.deepStrictEqual(exec('ENTRYPOINT'), ['node', 'dist/tools/filterd.js'])
  t.assert.ok((ROLE_NAMES as readonly string[]).includes(exec('CMD')[0]!), 'CMD starts with a role')
  // /run/filterd and /var/log/filterd, the default pid and log folders, writable by the image's user.
  t.assert.match(dockerfile, /^RUN mkdir -p .*\/run\/filterd.* && chown -R node:node .*\/run\/filterd/m)
  t.assert.match(dockerfile, /^USER node$/m)
})

test("the image's file layout runs the dns, blockpage and api roles, not only local", async (t: TestContext) => {
  // The final stage's COPY lines replayed into a folder: the build and deps stages are this
  // checkout after `npm run build` (node_modules linked: the image's holds the production subset).
  const app = join(tempDir(t, 'filterd-image-'), 'app')
  mkdirSync(app)
  for (const line of finalStage()) {
    const m = /^COPY (?:--from=(\w+) )?(\S+) (\S+)$/.exec(line)
    if (m === null) continue
    const src = m[1] === undefined ? join(REPO, m[2]!) : join(REPO, m[2]!.replace(/^\/app\//, ''))
    const dst = join(app, m[3]!.replace(/^\.\//, ''))
    if (m[2] === 'package.json' || m[3] === './') {
      cpSync(src, join(app, 'package.json'))
      continue
    }
    // The UDP addon where this machine could not build it (no compiler): the DNS role uses node:dgram.
    if (src.endsWith('.node') && !existsSync(src)) continue
    mkdirSync(dirname(dst), { recursive: true })
    if (m[2]!.endsWith('node_modules')) symlinkSync(src, dst)
    else cpSync(src, dst, { recursive: true })
  }
  const cli = join(app, 'dist/tools/filterd.js')
  t.assert.ok(existsSync(cli))
  const work = tempDir(t, 'filterd-image-run-')
  const [dns, front, api] = [await releasedPort(), await releasedPort(), await releasedPort()]
  // The config an operator mounts (docs/container.md, "Other roles"): the image's own conf/ and templates.
  const config = join(work, 'filterd.yaml')
  writeFileSync(
    config,
    [
      'dnscache:',
      '  forward: [127.0.0.1:9]',
      'proxy:',
      `  listen: [127.0.0.1:${dns}]`,
      '  blockpage-ip: [127.0.0.1]',
      '  log: "-"',
      `  pid: ${join(work, 'dns.pid')}`,
      'datafiles:',
      `  path: ${join(work, 'data')}`,
      `  cats: ${join(app, 'conf')}`,
      '  language: en',
      'blockpage:',
      `  listen: 127.0.0.1:${front}`,
      `  templates: ${join(app, 'blockpage/templates')}`,
      '  log: "-"',
      `  pid: ${join(work, 'blockpage.pid')}`,
      'api:',
      `  listen: 127.0.0.1:${api}`,
      '  log: "-"',
      `  pid: ${join(work, 'api.pid')}`,
      'common:',
      `  db: ${join(work, 'db')}`,
      '  log-level: warn',
      'stats:',
      `  dir: ${join(work, 'stats')}`,
      `  db: ${join(work, 'statsdb')}`
    ].join('\n') + '\n'
  )
  const roles: RoleName[] = ['api', 'dns', 'blockpage']
  for (const role of roles) {
    const child = await startRole(t, role, config, {}, cli)
    t.assert.ok(child.port > 0, `${role} started from the image layout`)
  }
  // A name blocked through the api role is shown by the block page with the image's templates.
  const put = await fetch(`http://127.0.0.1:${api}/blacklist/`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(['blocked.example'])
  })
  t.assert.strictEqual(put.status, 200)
  const page = await httpRequest({ port: front, headers: { host: 'blocked.example', accept: 'text/html' } })
  t.assert.match(page.body, /<title>Access restricted: blocked\.example<\/title>/)
})

test('scripts/release packs the built tree to install on a server, without node_modules', (t: TestContext) => {
  const out = tempDir(t, 'filterd-release-')
  const archive = execFileSync(join(REPO, 'scripts/release'), [out], { encoding: 'utf8' }).trim()
  t.assert.strictEqual(archive, join(out, `filterd-${pkg.version}.tar.gz`))
  const files = new Set(execFileSync('tar', ['-tzf', archive], { encoding: 'utf8', maxBuffer: 1 << 26 }).split('\n'))
  const prefix = `filterd-${pkg.version}/`
  for (const f of [
    'package.json',
    'package-lock.json',
    'dist/tools/filterd.js',
    'packaging/systemd/filterd@.service',
    'packaging/filterd',
    'packaging/sysusers.d/filterd.conf',
    'packaging/logrotate/filterd',
    'conf/filterd.example.yaml',
    'blockpage/templates/blocked.en.html',
    'docs/install.md',
    'LICENSE',
    'CHANGELOG.md'
  ]) {
    t.assert.ok(files.has(prefix + f), `the archive holds ${f}`)
  }
  t.assert.ok(![...files].some((f) => f.startsWith(prefix + 'node_modules/')), 'no node_modules')
  t.assert.match(
    readFileSync(`${archive}.sha256`, 'utf8'),
    new RegExp(`^[0-9a-f]{64}  filterd-${pkg.version}\\.tar\\.gz\\n$`)
  )
})

test("the logrotate file rotates every role's default log and signals each role by its default pid file, without copytruncate", (t: TestContext) => {
  const text = read('packaging/logrotate/filterd')
  const defaults = parseConfig('', '/etc/filterd/filterd.yaml')
  const globs = [...text.matchAll(/^(\/\S+) \{$/gm)].map((m) => m[1]!)
  const postrotate = /^\s*postrotate\n([^]*?)\n\s*endscript$/m.exec(text)?.[1] ?? ''
  for (const role of ROLE_NAMES) {
    const { log, pid } = sectionOf(defaults, role)
    // The local service logs to standard output by default (the container's role).
    if (log !== undefined && log !== '-')
      t.assert.ok(
        globs.some((g) => dirname(log) === dirname(g) && g.endsWith('/*.log') && log.endsWith('.log')),
        `${role}: ${String(log)} is rotated`
      )
    t.assert.ok(postrotate.includes(`${dirname(pid)}/*.pid`), `${role}: ${pid} is signalled`)
  }
  t.assert.match(postrotate, /kill -HUP/)
  t.assert.doesNotMatch(text.replace(/^#.*$/gm, ''), /copytruncate/)
})

test('LICENSE is the license package.json names, and CHANGELOG.md has the current version', (t: TestContext) => {
  t.assert.strictEqual(pkg.license, 'MIT')
  t.assert.match(read('LICENSE'), /^MIT License\n\nCopyright \(c\) \d{4} /)
  const changelog = read('CHANGELOG.md')
  t.assert.match(changelog, /^# Changelog\n/)
  t.assert.match(changelog, /keepachangelog\.com/)
  t.assert.match(changelog, new RegExp(`^## \\[${pkg.version.replaceAll('.', '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'))
})
