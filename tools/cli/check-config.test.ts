/**
 * `filterd check-config` checks the files and folders a config refers to, naming the key, instead of
 * a role failing later with a raw ENOENT.
 */
import { test, type TestContext } from 'node:test'
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONF, FILTERD } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'

function checkConfig(file: string, ...more: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [FILTERD, 'check-config', '--config', file, ...more], {
    encoding: 'utf8',
    timeout: 60_000
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('check-config refuses a config naming missing files and folders, one line per key, no stack', (t: TestContext) => {
  const dir = tempDir(t, 'filterd-check-config-')
  mkdirSync(join(dir, 'data'))
  writeFileSync(join(dir, 'data', 'custom.txt'), '')
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    [
      'datafiles:',
      `  path: ${join(dir, 'data')}`,
      '  file: [custom.txt, missing.txt]',
      `  cats: ${CONF}`,
      'blockpage:',
      `  templates: ${join(dir, 'no-templates')}`,
      `  tls-cert: ${join(dir, 'cert.pem')}`,
      `  tls-key: ${join(dir, 'data')}`,
      ''
    ].join('\n')
  )
  const r = checkConfig(file)
  t.assert.strictEqual(r.code, 1)
  t.assert.strictEqual(r.stdout, '')
  t.assert.match(r.stderr, /datafiles\.file\[1\]: .*missing\.txt: no such file/)
  t.assert.match(r.stderr, /blockpage\.templates: .*no-templates: no such folder/)
  t.assert.match(r.stderr, /blockpage\.tls-cert: .*cert\.pem: no such file/)
  t.assert.match(r.stderr, /blockpage\.tls-key: .*is a folder, not a file/)
  t.assert.doesNotMatch(r.stderr, /datafiles\.file\[0\]|datafiles\.cats|ENOENT|\n\s+at /)

  // Fixed, it passes and prints the config.
  mkdirSync(join(dir, 'no-templates'))
  writeFileSync(join(dir, 'data', 'missing.txt'), '')
  writeFileSync(join(dir, 'cert.pem'), '')
  writeFileSync(
    file,
    [
      'datafiles:',
      `  path: ${join(dir, 'data')}`,
      '  file: [custom.txt, missing.txt]',
      `  cats: ${CONF}`,
      'blockpage:',
      `  templates: ${join(dir, 'no-templates')}`,
      `  tls-cert: ${join(dir, 'cert.pem')}`,
      `  tls-key: ${join(dir, 'cert.pem')}`,
      ''
    ].join('\n')
  )
  const ok = checkConfig(file, '--json')
  t.assert.strictEqual(ok.code, 0, ok.stderr)
  t.assert.strictEqual(JSON.parse(ok.stdout).blockpage['tls-key'], join(dir, 'cert.pem'))

  if (process.getuid?.() !== 0) {
    chmodSync(join(dir, 'cert.pem'), 0)
    t.assert.match(checkConfig(file).stderr, /blockpage\.tls-cert: .*not readable/)
  }
})

test('check-config checks every taxonomy file build-db and the roles read: the metadata and the group names of each language in use', (t: TestContext) => {
  const dir = tempDir(t, 'filterd-check-config-')
  const cats = join(dir, 'cats')
  mkdirSync(cats)
  copyFileSync(join(CONF, 'catgroups.json'), join(cats, 'catgroups.json'))
  const file = join(dir, 'filterd.yaml')
  const write = (lines: string[]): void => {
    writeFileSync(file, ['datafiles:', `  path: ${dir}`, `  cats: ${cats}`, ...lines, ''].join('\n'))
  }
  write(['  language: ru', 'catapi:', '  language: en'])
  const r = checkConfig(file)
  t.assert.strictEqual(r.code, 1)
  t.assert.match(r.stderr, /datafiles\.cats: .*categories\.meta\.json: no such file/)
  t.assert.match(r.stderr, /datafiles\.cats: .*catgroups_en\.json: no such file/, 'catapi.language is en')
  t.assert.doesNotMatch(r.stderr, /catgroups\.json|ENOENT|\n\s+at /)
  copyFileSync(join(CONF, 'categories.meta.json'), join(cats, 'categories.meta.json'))
  // Without the catapi section only datafiles.language (ru) is read.
  write(['  language: ru'])
  t.assert.strictEqual(checkConfig(file).code, 0)
  copyFileSync(join(CONF, 'catgroups_en.json'), join(cats, 'catgroups_en.json'))
  write(['  language: ru', 'catapi:', '  language: en'])
  const ok = checkConfig(file)
  t.assert.strictEqual(ok.code, 0, ok.stderr)
})

test('the demo config passes check-config, which says so in one line', (t: TestContext) => {
  const r = checkConfig(join(CONF, 'demo.yaml'))
  t.assert.strictEqual(r.code, 0, r.stderr)
  // dns: 2 addresses and its metrics listener; blockpage, api, catapi (2), local, collector, sync.
  t.assert.strictEqual(r.stdout, `config OK: 8 roles, 12 listeners (${join(CONF, 'demo.yaml')})\n`)
})

test('check-config refuses a log or pid folder the user cannot create, naming the key', (t: TestContext) => {
  const dir = tempDir(t, 'filterd-check-config-')
  writeFileSync(join(dir, 'a-file'), '')
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    [
      'proxy:',
      `  log: ${join(dir, 'a-file', 'logs', 'proxy.log')}`,
      `  pid: ${join(dir, 'run', 'dns.pid')}`,
      ...['blockpage', 'api', 'catapi', 'local', 'collector', 'sync'].flatMap((s) => [
        `${s}:`,
        `  pid: ${join(dir, 'run', `${s}.pid`)}`,
        ...(s === 'local' ? ['  listen: 127.0.0.1:18084'] : ['  log: "-"'])
      ]),
      ''
    ].join('\n')
  )
  const r = checkConfig(file)
  t.assert.strictEqual(r.code, 1)
  t.assert.match(
    r.stderr,
    new RegExp(`proxy\\.log: .*a-file/logs: cannot be created \\(.*a-file is not a folder\\) by (user|uid) `)
  )
  t.assert.doesNotMatch(r.stderr, /\.pid:/, 'run/ does not exist yet, and its parent is writable: the role creates it')
  if (process.getuid?.() === 0) {
    // As another user (the roles' user, as the unit runs it), a folder owned by root is not writable.
    const runDir = join(dir, 'run')
    mkdirSync(runDir, { mode: 0o755 })
    chmodSync(dir, 0o755)
    writeFileSync(file, readFileSync(file, 'utf8').replace(join(dir, 'a-file', 'logs', 'proxy.log'), '"-"'))
    const other = spawnSync(process.execPath, [FILTERD, 'check-config', '--config', file], {
      encoding: 'utf8',
      timeout: 60_000,
      uid: 65534,
      gid: 65534
    })
    if (other.error === undefined && !/EACCES|Cannot find module/.test(other.stderr)) {
      t.assert.strictEqual(other.status, 1, other.stderr)
      t.assert.match(other.stderr, /proxy\.pid: .*\/run: is not writable by (user|uid) /)
    }
  }
})

test('check-config leaves out the log and pid folders of a role the config does not run (rpz disabled, sync without Redis)', (t: TestContext) => {
  const dir = tempDir(t, 'filterd-check-config-')
  writeFileSync(join(dir, 'a-file'), '')
  const bad = (name: string): string => join(dir, 'a-file', 'x', name)
  const file = join(dir, 'filterd.yaml')
  const write = (rpzEnabled: boolean): void =>
    writeFileSync(
      file,
      [
        'proxy:',
        `  pid: ${join(dir, 'run', 'dns.pid')}`,
        ...['blockpage', 'api', 'catapi', 'local', 'collector'].flatMap((s) => [
          `${s}:`,
          `  pid: ${join(dir, 'run', `${s}.pid`)}`,
          ...(s === 'local' ? ['  listen: 127.0.0.1:18084'] : [])
        ]),
        ...['sync', 'rpz'].flatMap((s) => [`${s}:`, `  pid: ${bad(`${s}.pid`)}`, `  log: ${bad(`${s}.log`)}`]),
        `  enabled: ${rpzEnabled}`,
        ''
      ].join('\n')
    )
  // Other keys of this short config (the templates' default folder) may be refused here: only these lines count.
  write(false)
  const r = checkConfig(file)
  t.assert.doesNotMatch(r.stderr, /(rpz|sync)\.(log|pid):/)
  t.assert.doesNotMatch(r.stderr, /\.(log|pid):/, "the enabled roles' folders are fine")
  write(true)
  const enabled = checkConfig(file)
  t.assert.strictEqual(enabled.code, 1)
  t.assert.match(enabled.stderr, /rpz\.log: .*a-file\/x: cannot be created/)
  t.assert.match(enabled.stderr, /rpz\.pid: .*a-file\/x: cannot be created/)
  t.assert.doesNotMatch(enabled.stderr, /sync\./)
})
