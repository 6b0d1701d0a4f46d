// filterd backup / filterd restore (docs/backup.md), through the CLI against the real api role.
import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  appendFileSync,
  chownSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs'
import { join } from 'node:path'
import { loadConfigFile } from '../../engine/features.js'
import { silentLogger } from '../../engine/log/index.js'
import { formatDay, ReportTime } from '../../engine/stats/index.js'
import { ANONYMOUS_USER, createCsvQueryLog } from '../../engine/querylog/index.js'
import { rec } from '../../engine/testing/stats/fixtures.js'
import { Store } from '../../engine/store/index.js'
import { REPO, runCli, startRole } from '../../engine/testing/daemon.js'
import { fetchJson as getJson, until } from '../../engine/testing/wait.js'
import { tempDir } from '../../engine/testing/temp.js'
import { writeTaxonomy } from '../../api/testing/fixtures.js'

/** A config whose store, statistics and pid file live in `root/<name>/`. */
function hostConfig(root: string, name: string): string {
  const file = join(root, `${name}.yaml`)
  const at = join(root, name)
  writeFileSync(
    file,
    [
      'datafiles:',
      `  cats: ${join(root, 'cats')}`,
      '  language: en',
      'common:',
      `  db: ${join(at, 'db')}`,
      '  log-level: error',
      'stats:',
      `  dir: ${join(at, 'stats')}`,
      `  db: ${join(at, 'statsdb')}`,
      '  import-interval: 86400',
      'api:',
      '  listen: 127.0.0.1:0',
      '  log: "-"',
      `  pid: ${join(at, 'api.pid')}`
    ].join('\n') + '\n'
  )
  return file
}

interface Ack {
  user: string
  ip: string
}

test('a backup taken during a write storm holds every write acknowledged before it began, and restores into a store the api role serves', async (t: TestContext) => {
  const root = tempDir(t, 'filterd-backup-')
  writeTaxonomy(join(root, 'cats'))
  const fileA = hostConfig(root, 'a')
  const configA = loadConfigFile(fileA)
  const now = Date.now()

  // Statistics: a file the api role imports at start (in the statistics database), one closed after
  // that (still a CSV file: the import interval is a day), and one a writer still has open.
  const closed = async (name: string): Promise<void> => {
    const log = createCsvQueryLog(configA, silentLogger(), { flushIntervalMs: 0, controlPollMs: 0 })
    log.write(rec(now, '192.0.2.7', null, name))
    await log.close()
  }
  await closed('imported-at-start.example')
  const api = await startRole(t, 'api', fileA)
  const day = formatDay(new ReportTime('UTC').dayOf(now))
  const domains = async (base: string): Promise<string[]> =>
    (
      (await getJson(`${base}/users/${encodeURIComponent(ANONYMOUS_USER)}/stat/domains/all?from=${day}&to=${day}`))
        .body as { labels: string[] }
    ).labels
  await until('the condition', async () => (await domains(api.url)).includes('imported-at-start.example'), 15_000)
  await closed('closed-later.example')
  // Like a DNS process: it checks for the rotation request once a second.
  const writer = createCsvQueryLog(configA, silentLogger(), { flushIntervalMs: 0 })
  t.after(async () => {
    await writer.close()
  })
  writer.write(rec(now, '192.0.2.7', null, 'still-open.example'))
  await until('the condition', () => readdirSync(configA.stats.dir).some((n) => n.endsWith('.part')), 10_000)

  // The storm: writers PUT new users, each with its own address, until told to stop.
  const acknowledged: Ack[] = []
  let stop = false
  let failures = 0
  const storm = Array.from({ length: 4 }, async (_, w) => {
    for (let n = 0; !stop; n++) {
      // Every write its own address: a reused one would move to its new user, and the older write
      // would look lost from the backup although the backup is right.
      const ack = { user: `w${w}-${n}`, ip: `10.${9 + w}.${(n >> 8) & 255}.${n & 255}` }
      try {
        const res = await fetch(`${api.url}/users/${ack.user}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ filter: [40], ip: [ack.ip] }),
          signal: AbortSignal.timeout(10_000)
        })
        await res.arrayBuffer()
        if (res.status === 200 || res.status === 201) acknowledged.push(ack)
        else failures++
      } catch {
        failures++
      }
    }
  })
  await until('the condition', () => acknowledged.length >= 20, 30_000)
  const beforeBackup = acknowledged.slice()
  const backupDir = join(root, 'backup')
  const made = await runCli(['backup', '--config', fileA, backupDir])
  const duringBackup = acknowledged.length - beforeBackup.length
  stop = true
  await Promise.all(storm)
  t.assert.strictEqual(made.code, 0, made.stderr)
  t.assert.match(made.stdout, /backup of .* written to/)
  t.assert.strictEqual(failures, 0)
  t.diagnostic(`${beforeBackup.length} writes acknowledged before the backup, ${duringBackup} during it`)
  t.assert.ok(duringBackup > 0, 'the api role kept acknowledging writes while the backup ran')
  const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as {
    files: Array<{ path: string }>
    store: { users: number }
  }
  t.assert.ok(manifest.files.some((f) => f.path === 'statsdb/stats.duckdb'))
  // The api role made that copy in its own folder; the backup took it away, leaving nothing behind.
  t.assert.deepStrictEqual(
    readdirSync(configA.stats.db).filter((n) => n.startsWith('snapshot')),
    []
  )
  t.assert.ok(manifest.store.users >= beforeBackup.length)

  // While the api role runs on the store, restore refuses, even with --force, and changes nothing.
  const busy = await runCli(['restore', '--force', '--config', fileA, backupDir])
  t.assert.strictEqual(busy.code, 1)
  t.assert.match(busy.stderr, new RegExp(`api \\(pid ${api.proc.pid ?? 0}, `))
  t.assert.deepStrictEqual(
    readdirSync(root).filter((n) => n.includes('restore')),
    []
  )
  t.assert.deepStrictEqual(
    readdirSync(join(root, 'a')).filter((n) => n.includes('restor')),
    []
  )
  await api.stop()

  // Restore into a fresh host layout.
  const fileB = hostConfig(root, 'b')
  const restored = await runCli(['restore', '--config', fileB, backupDir])
  t.assert.strictEqual(restored.code, 0, restored.stderr)
  const configB = loadConfigFile(fileB)
  const store = Store.open(configB.common.db, { readOnly: true })
  const lost = beforeBackup.filter((a) => store.getUser(a.user)?.ip[0] !== a.ip || store.ownerOf(a.ip) !== a.user)
  await store.close()
  t.assert.deepStrictEqual(
    lost,
    [],
    `${lost.length} writes acknowledged before the backup are missing from the restored store`
  )

  // The restored host serves it, and its statistics hold the three files' queries.
  const apiB = await startRole(t, 'api', fileB)
  const first = beforeBackup[0]!
  const user = await getJson(`${apiB.url}/users/${first.user}`)
  t.assert.strictEqual(user.status, 200)
  t.assert.deepStrictEqual((user.body as { ip: string[] }).ip, [first.ip])
  await until('the condition', async () => (await domains(apiB.url)).length === 3, 15_000)
  t.assert.deepStrictEqual((await domains(apiB.url)).sort(), [
    'closed-later.example',
    'imported-at-start.example',
    'still-open.example'
  ])
  // The restored store takes writes.
  const put = await fetch(`${apiB.url}/users/after-restore`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ filter: [40] })
  })
  t.assert.ok(put.status === 200 || put.status === 201, `PUT after restore: ${put.status}`)
})

test('restore refuses a backup that is incomplete, damaged or added to, and a non-empty target unless --force', async (t: TestContext) => {
  const root = tempDir(t, 'filterd-restore-')
  writeTaxonomy(join(root, 'cats'))
  const fileA = hostConfig(root, 'a')
  const configA = loadConfigFile(fileA)
  const s = Store.open(configA.common.db)
  await s.write((w) => w.putUser(s.newUser('alice')))
  await s.close()

  const help = await Promise.all([runCli(['backup', '--help']), runCli(['restore', '--help'])])
  for (const h of help) {
    t.assert.strictEqual(h.code, 0)
    t.assert.match(h.stdout, /^usage: filterd (backup|restore) --config FILE/)
  }
  t.assert.strictEqual((await runCli(['backup', '--config', fileA])).code, 2)

  // Roles stopped and no lock file: a backup run as root leaves the lock file it made to the
  // store's owner (the daemons' user), or they could not open the store again.
  rmSync(join(configA.common.db, 'lock.mdb'), { force: true })
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(join(configA.common.db, 'data.mdb'), 65534, 65534)
  const dir = join(root, 'backup')
  t.assert.strictEqual((await runCli(['backup', '--config', fileA, dir])).code, 0)
  if (asRoot) t.assert.strictEqual(statSync(join(configA.common.db, 'lock.mdb')).uid, 65534)
  const again = await runCli(['backup', '--config', fileA, dir])
  t.assert.strictEqual(again.code, 1)
  t.assert.match(again.stderr, /is not empty/)

  const fileB = hostConfig(root, 'b')
  const configB = loadConfigFile(fileB)
  const checked = await runCli(['restore', '--check', dir])
  t.assert.strictEqual(checked.code, 0, checked.stderr)
  t.assert.match(checked.stdout, /a complete backup of .*: 1 files match the manifest; store generation 1, 1 users/)
  const refused = async (pattern: RegExp): Promise<void> => {
    const r = await runCli(['restore', '--config', fileB, dir])
    t.assert.strictEqual(r.code, 1, r.stdout)
    t.assert.match(r.stderr, pattern)
    t.assert.strictEqual(existsSync(join(root, 'b')), false, 'a refused restore creates nothing')
    const check = await runCli(['restore', '--check', dir])
    t.assert.strictEqual(check.code, 1)
    t.assert.match(check.stderr, pattern)
  }
  const manifest = readFileSync(join(dir, 'manifest.json'))
  const data = readFileSync(join(dir, 'store', 'data.mdb'))

  rmSync(join(dir, 'manifest.json'))
  await refused(/no manifest\.json: not a backup, or a backup that did not finish/)
  writeFileSync(join(dir, 'manifest.json'), manifest)

  const flipped = Buffer.from(data)
  const at = flipped.length - 100
  flipped.writeUInt8(flipped.readUInt8(at) ^ 0xff, at)
  writeFileSync(join(dir, 'store', 'data.mdb'), flipped)
  await refused(/damaged: store\/data\.mdb does not match its SHA-256/)
  writeFileSync(join(dir, 'store', 'data.mdb'), data)

  rmSync(join(dir, 'store', 'data.mdb'))
  await refused(/incomplete: store\/data\.mdb is missing/)
  writeFileSync(join(dir, 'store', 'data.mdb'), data)

  appendFileSync(join(dir, 'store', 'notes.txt'), 'x')
  await refused(/files the manifest does not list \(store\/notes\.txt\)/)
  rmSync(join(dir, 'store', 'notes.txt'))

  t.assert.strictEqual((await runCli(['restore', '--config', fileB, dir])).code, 0)
  // Now the target holds a store: refused without --force; with it, the old one is moved aside.
  const s2 = Store.open(configB.common.db)
  await s2.write((w) => w.putUser(s2.newUser('bob')))
  await s2.close()
  const busy = await runCli(['restore', '--config', fileB, dir])
  t.assert.strictEqual(busy.code, 1)
  t.assert.match(busy.stderr, /not empty: .*\(common\.db\).*--force/)
  const forced = await runCli(['restore', '--force', '--config', fileB, dir])
  t.assert.strictEqual(forced.code, 0, forced.stderr)
  const aside = /previous contents are in (\S+)/.exec(forced.stdout)?.[1] ?? ''
  t.assert.match(aside, /db-before-restore-\d{8}T\d{9}Z$/)
  const old = Store.open(aside, { readOnly: true })
  const now = Store.open(configB.common.db, { readOnly: true })
  t.assert.deepStrictEqual([old.hasUser('bob'), now.hasUser('bob'), now.hasUser('alice')], [true, false, true])
  await old.close()
  await now.close()

  // A process with the store open (say, a role started by hand, with no pid file): refused.
  const holder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { open } from 'lmdb'; const e = open({ path: ${JSON.stringify(configB.common.db)}, readOnly: true }); e.get('x'); console.log('open'); setInterval(() => {}, 1000)`
    ],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] }
  )
  t.after(() => {
    holder.kill('SIGKILL')
  })
  await once(holder.stdout, 'data')
  const held = await runCli(['restore', '--force', '--config', fileB, dir])
  t.assert.strictEqual(held.code, 1)
  t.assert.match(held.stderr, new RegExp(`${configB.common.db} \\(common\\.db\\) is open by pid ${holder.pid ?? 0};`))
  holder.kill('SIGKILL')
  await once(holder, 'exit')

  // The same for the statistics store: DuckDB keeps its file open (a stats-migrate, say).
  const statsHolder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { mkdirSync } from 'node:fs'; import { DuckDBInstance } from '@duckdb/node-api'; mkdirSync(${JSON.stringify(configB.stats.db)}, { recursive: true }); ` +
        `await DuckDBInstance.create(${JSON.stringify(join(configB.stats.db, 'stats.duckdb'))}); console.log('open'); setInterval(() => {}, 1000)`
    ],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] }
  )
  t.after(() => {
    statsHolder.kill('SIGKILL')
  })
  await once(statsHolder.stdout, 'data')
  const statsHeld = await runCli(['restore', '--force', '--config', fileB, dir])
  t.assert.strictEqual(statsHeld.code, 1)
  t.assert.match(
    statsHeld.stderr,
    new RegExp(`${configB.stats.db} \\(stats\\.db\\) is open by pid ${statsHolder.pid ?? 0};`)
  )
  statsHolder.kill('SIGKILL')
  await once(statsHolder, 'exit')

  // A damaged store (its meta pages gone), the case docs/errors.md sends here: restored over, kept aside.
  const damaged = join(configB.common.db, 'data.mdb')
  writeFileSync(damaged, Buffer.alloc(statSync(damaged).size))
  const repaired = await runCli(['restore', '--force', '--config', fileB, dir])
  t.assert.strictEqual(repaired.code, 0, repaired.stderr)
  const healthy = Store.open(configB.common.db, { readOnly: true })
  t.assert.ok(healthy.hasUser('alice'))
  await healthy.close()
})
