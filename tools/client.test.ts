import { test, type TestContext } from 'node:test'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadTaxonomy } from '../engine/categories/index.js'
import { Store } from '../engine/store/index.js'
import { startStubResolver } from '../engine/upstream-stub/index.js'
import { CONF_DIR, basic, buildCats, get } from '../catapi/testing/harness.js'
import { ExistenceChecker } from '../catapi/resolver.js'
import { FILTERD, runCli, type CliRun } from '../engine/testing/daemon.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { createCatApi } from '../catapi/server.js'

type Run = CliRun

function secretOf(run: Run): { id: string; secret: string } {
  const id = /^client_id: (\S+)$/m.exec(run.stdout)?.[1]
  const secret = /^client_secret: (\S+)$/m.exec(run.stdout)?.[1]
  if (id === undefined || secret === undefined) throw new Error(`no credentials in: ${run.stdout}${run.stderr}`)
  return { id, secret }
}

/** A temp dir with a config file pointing at its own store; one cleanup, in order. */
function setup(
  t: TestContext,
  extra = ''
): { dir: string; config: string; db: string; cleanups: Array<() => unknown> } {
  const { dir, cleanup } = makeTempDir('filterd-client-')
  const cleanups: Array<() => unknown> = [cleanup]
  t.after(async () => {
    for (const c of cleanups.reverse()) await c()
  })
  const db = join(dir, 'db')
  const config = join(dir, 'filterd.yaml')
  writeFileSync(config, `common:\n  db: ${db}\n${extra}`)
  return { dir, config, db, cleanups }
}

test('client add prints a secret once that then authenticates, and rotate, list, remove and usage manage it', async (t: TestContext) => {
  const { config, db, cleanups } = setup(t)
  const store = Store.open(db)
  cleanups.push(() => store.close())
  await buildCats(store, [['example.com', [40]]])
  const api = createCatApi({
    store,
    taxonomy: loadTaxonomy(CONF_DIR, 'en'),
    existence: new ExistenceChecker({ resolvers: [] })
  })
  cleanups.push(() => api.close())
  const { registered } = await api.listen({ host: '127.0.0.1', port: 0 }, { host: '127.0.0.1', port: 0 })

  const added = await runCli(['client', 'add', '--config', config, '--label', 'Acme ISP'])
  t.assert.strictEqual(added.code, 0, added.stderr)
  const first = secretOf(added)
  t.assert.strictEqual(
    (await get(registered, '/domain/example.com', { Authorization: basic(first.id, first.secret) })).status,
    200
  )
  t.assert.strictEqual(
    (await get(registered, '/domain/example.com', { Authorization: basic(first.id, 'not-it') })).status,
    401
  )

  const listed = await runCli(['client', 'list', '--config', config])
  t.assert.strictEqual(listed.code, 0)
  t.assert.match(listed.stdout, new RegExp(`^${first.id}\\t\\S+\\tAcme ISP$`, 'm'))
  t.assert.ok(!listed.stdout.includes(first.secret))

  const rotated = await runCli(['client', 'rotate', '--config', config, first.id])
  t.assert.strictEqual(rotated.code, 0, rotated.stderr)
  const second = secretOf(rotated)
  t.assert.strictEqual(second.id, first.id)
  t.assert.notStrictEqual(second.secret, first.secret)
  t.assert.strictEqual(
    (await get(registered, '/catgroups', { Authorization: basic(first.id, first.secret) })).status,
    401
  )
  t.assert.strictEqual(
    (await get(registered, '/catgroups', { Authorization: basic(second.id, second.secret) })).status,
    200
  )

  await api.usage.flush()
  const usage = await runCli(['client', 'usage', '--config', config, '--client', first.id])
  t.assert.strictEqual(usage.code, 0, usage.stderr)
  const today = new Date().toISOString().slice(0, 10)
  t.assert.match(usage.stdout, new RegExp(`^${first.id}\\t${today}\\t2$`, 'm'))
  const none = await runCli(['client', 'usage', '--config', config, '--from', '2000-01-01', '--to', '2000-01-31'])
  t.assert.match(none.stdout, /^total\t\t0$/m)

  const removed = await runCli(['client', 'remove', '--config', config, first.id])
  t.assert.strictEqual(removed.code, 0)
  t.assert.strictEqual(
    (await get(registered, '/catgroups', { Authorization: basic(second.id, second.secret) })).status,
    401
  )
  t.assert.strictEqual((await runCli(['client', 'remove', '--config', config, first.id])).code, 1)
  t.assert.doesNotMatch((await runCli(['client', 'list', '--config', config])).stdout, new RegExp(first.id))
})

test('client refuses to run without --config and rejects a duplicate id', async (t: TestContext) => {
  const { config } = setup(t)
  const bare = await runCli(['client', 'list'])
  t.assert.strictEqual(bare.code, 2)
  t.assert.match(bare.stderr, /--config FILE is required/)
  t.assert.strictEqual((await runCli(['client', 'add', '--config', config, '--id', 'acme'])).code, 0)
  const again = await runCli(['client', 'add', '--config', config, '--id', 'acme'])
  t.assert.strictEqual(again.code, 1)
  t.assert.match(again.stderr, /already exists/)
  t.assert.strictEqual((await runCli(['client', 'add', '--config', config, '--id', 'a:b'])).code, 2)
})

test('the catapi daemon serves both listeners from its config and stops cleanly on SIGTERM', async (t: TestContext) => {
  const resolver = await startStubResolver({ nxdomain: ['gone.example'] })
  const { dir, config, db, cleanups } = setup(t)
  cleanups.push(() => resolver.close())
  const pid = join(dir, 'catapi.pid')
  writeFileSync(
    config,
    [
      `common: { db: ${db} }`,
      `dnscache: { forward: ["127.0.0.1:${resolver.port}"] }`,
      `datafiles: { cats: ${CONF_DIR}, language: en }`,
      `catapi: { listen: "127.0.0.1:0", anon-listen: "127.0.0.1:0", anon-limit: 3, log: ${join(dir, 'catapi.log')}, pid: ${pid} }`,
      ''
    ].join('\n')
  )
  const store = Store.open(db)
  await buildCats(store, [['example.com', [40]]])
  await store.close()
  const { id, secret } = secretOf(await runCli(['client', 'add', '--config', config]))

  const child = spawn(process.execPath, [FILTERD, 'catapi', '--config', config], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc']
  })
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
  })
  const [ready] = (await once(child, 'message')) as [{ type: string; endpoints: string[] }]
  t.assert.strictEqual(ready.type, 'ready')
  const portOf = (kind: string): number =>
    Number(/:(\d+)$/.exec(ready.endpoints.find((e) => e.includes(kind)) ?? '')?.[1])
  const reg = portOf('registered')
  const anon = portOf('anonymous')
  t.assert.ok(existsSync(pid))

  t.assert.strictEqual((await get(reg, '/domain/www.example.com', { Authorization: basic(id, secret) })).status, 200)
  t.assert.strictEqual((await get(reg, '/domain/www.example.com')).status, 401)
  t.assert.strictEqual((await get(anon, '/domain/gone.example')).status, 206)
  t.assert.strictEqual((await get(anon, '/domain/uncategorized.org')).status, 404)
  t.assert.strictEqual((await get(anon, '/catgroups')).status, 200)
  t.assert.strictEqual((await get(anon, '/catgroups')).status, 429)

  child.kill('SIGTERM')
  const [code] = (await once(child, 'exit')) as [number | null]
  t.assert.strictEqual(code, 0)
  t.assert.ok(!existsSync(pid))
  const after = Store.open(db)
  cleanups.push(() => after.close())
  const { readUsage } = await import('../catapi/usage.js')
  t.assert.strictEqual(
    readUsage(after, { client: id }).reduce((n, r) => n + r.requests, 0),
    1
  )
})
