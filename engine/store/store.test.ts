import { test, type TestContext } from 'node:test'
import { tempStore as makeStore } from '../testing/store.js'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { untilReady } from '../testing/processes.js'
import { GENERATION_CHECK_MS, GenerationWatcher, SNAPSHOT_MAX_AGE_MS } from './index.js'

const tempStore = (t: TestContext): ReturnType<typeof makeStore> => makeStore(t, 'filterd-store-')

test('a write bumps the generation and is readable once acknowledged', async (t: TestContext) => {
  const { store } = tempStore(t)
  const before = store.generation()
  await store.write((w) => w.putUser({ ...store.newUser('alice'), filter: [3] }))
  t.assert.strictEqual(store.generation(), before + 1)
  t.assert.deepStrictEqual(store.getUser('alice')?.filter, [3])
})

test('a write that throws changes nothing', async (t: TestContext) => {
  const { store } = tempStore(t)
  await store.write((w) => w.putUser(store.newUser('bob')))
  const g = store.generation()
  await t.assert.rejects(
    store.write((w) => {
      w.putUser({ ...store.newUser('bob'), status: 'disabled' })
      throw new Error('half way')
    }),
    /half way/
  )
  t.assert.strictEqual(store.getUser('bob')?.status, 'enabled')
  t.assert.strictEqual(store.generation(), g)
})

test('claiming an address moves it from its previous owner', async (t: TestContext) => {
  const { store } = tempStore(t)
  await store.write((w) => {
    w.putUser({ ...store.newUser('a'), ip: ['10.0.0.1'] })
    w.claimAddresses('a', ['10.0.0.1'])
  })
  const moved = await store.write((w) => {
    const m = w.claimAddresses('b', ['10.0.0.1'])
    w.putUser({ ...store.newUser('b'), ip: ['10.0.0.1'] })
    return m
  })
  t.assert.deepStrictEqual(moved, [{ address: '10.0.0.1', from: 'a' }])
  t.assert.deepStrictEqual(store.getUser('a')?.ip, [])
  t.assert.strictEqual(store.userForAddress('10.0.0.1'), 'b')
})

test('an address inside a delegated prefix finds the user of the longest prefix', async (t: TestContext) => {
  const { store } = tempStore(t)
  await store.write((w) => {
    w.putUser({ ...store.newUser('wide'), ip: ['2001:db8::/32'] })
    w.claimAddresses('wide', ['2001:db8::/32'])
    w.putUser({ ...store.newUser('narrow'), ip: ['2001:db8:1::/48', '192.0.2.0/24'] })
    w.claimAddresses('narrow', ['2001:db8:1::/48', '192.0.2.0/24'])
  })
  t.assert.strictEqual(store.userForAddress('2001:db8:1::5'), 'narrow')
  t.assert.strictEqual(store.userForAddress('2001:db8:2::5'), 'wide')
  t.assert.strictEqual(store.userForAddress('192.0.2.77'), 'narrow')
  t.assert.strictEqual(store.userForAddress('198.51.100.1'), undefined)
  await store.write((w) => {
    w.deleteUser('narrow')
  })
  t.assert.strictEqual(store.userForAddress('2001:db8:1::5'), 'wide')
})

test('users are listed in a stable key order with start and stop', async (t: TestContext) => {
  const { store } = tempStore(t)
  await store.write((w) => {
    for (const id of ['c', 'a', 'b', 'd']) w.putUser(store.newUser(id))
  })
  t.assert.deepStrictEqual(
    store.listUsers(0, 2).map((u) => u.name),
    ['a', 'b']
  )
  t.assert.deepStrictEqual(
    store.listUsers(2, 100).map((u) => u.name),
    ['c', 'd']
  )
})

test('a write in one process is read by another process without restart', async (t: TestContext) => {
  const { store, path } = tempStore(t)
  // The child opens the same environment, polls for the user and prints its filter.
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import { Store } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)}
    const s = Store.open(${JSON.stringify(path)})
    console.log('ready')
    const timer = setInterval(() => {
      const u = s.getUser('carol')
      if (u) { console.log(JSON.stringify(u.filter) + ' ' + s.generation()); clearInterval(timer); s.close() }
    }, 5)
  `
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] }
  )
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d: string) => {
    out += d
  })
  const exited = once(child, 'exit')
  await untilReady(child.stdout, () => out, exited)
  await store.write((w) => w.putUser({ ...store.newUser('carol'), filter: [7, 9] }))
  const [code] = (await exited) as [number]
  t.assert.strictEqual(code, 0)
  t.assert.match(out, new RegExp(`\\[7,9\\] ${store.generation()}`))
})

test('a read snapshot is renewed after SNAPSHOT_MAX_AGE_MS and let go when nobody reads for that long', async (t: TestContext) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 })
  const { store } = tempStore(t)
  const meta = store.root.openDB<unknown, string>({ name: 'meta' })
  store.readSnapshot()
  await store.write((w) => {
    w.putMeta('probe', 1)
  })
  t.assert.strictEqual(meta.get('probe', { transaction: store.readSnapshot() }), undefined) // still the old snapshot
  t.mock.timers.tick(SNAPSHOT_MAX_AGE_MS + 1)
  t.assert.strictEqual(meta.get('probe', { transaction: store.readSnapshot() }), 1) // a current one
  t.assert.strictEqual(store.holdsSnapshot, true)
  t.mock.timers.tick(3 * SNAPSHOT_MAX_AGE_MS) // idle: the sweep lets it go
  t.assert.strictEqual(store.holdsSnapshot, false)
})

test('the generation watcher reports a write once, when it reads: polled after the interval, or on its timer', async (t: TestContext) => {
  const { store } = tempStore(t)
  const seen: number[] = []
  const watcher = new GenerationWatcher(store, (g) => {
    seen.push(g)
  })
  t.assert.strictEqual(watcher.check(), false)
  await store.write((w) => w.putUser(store.newUser('carol')))
  t.assert.deepStrictEqual(seen, [], 'nothing is reported before a read')
  await new Promise((resolve) => setTimeout(resolve, 2 * GENERATION_CHECK_MS))
  t.assert.strictEqual(watcher.poll(), true)
  t.assert.deepStrictEqual(seen, [store.generation()])
  t.assert.strictEqual(watcher.check(), false, 'a move is reported once')

  watcher.start()
  t.after(() => {
    watcher.stop()
  })
  await store.write((w) => w.putUser(store.newUser('dave')))
  const deadline = Date.now() + 5000
  while (seen.length < 2 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, GENERATION_CHECK_MS))
  t.assert.deepStrictEqual(seen, [store.generation() - 1, store.generation()])
  t.assert.strictEqual(watcher.generation, store.generation())
})

test('a store that follows a shared store refuses policy writes without Redis, takes meta-only ones, and is its own again once detached', async (t: TestContext) => {
  const { store } = tempStore(t)
  await store.write((w) => w.putUser(store.newUser('alice')))
  t.assert.strictEqual(store.foreignGeneration(), false)
  await store.markFollower('127.0.0.1:6379')
  const g = store.generation()
  await t.assert.rejects(
    store.write((w) => {
      w.putMeta('note', 1)
      w.putUser(store.newUser('dave'))
    }),
    {
      code: 'ENGINE_STORE_FOLLOWS_REDIS',
      message: /replica of the shared Redis store at 127\.0\.0\.1:6379 .*common\.redis-ip/
    }
  )
  t.assert.strictEqual(store.getUser('dave'), undefined)
  t.assert.strictEqual(store.getMeta('note'), undefined, 'the whole write rolled back')
  t.assert.strictEqual(store.generation(), g)
  // The category database's activation (build-db) is per host: it still commits, and is no foreign write.
  await store.write((w) => {
    w.putMeta('catdb.active', 2)
  })
  t.assert.strictEqual(store.getMeta('catdb.active'), 2)
  t.assert.strictEqual(store.foreignGeneration(), false)
  // A writer that bumps the generation behind the replica's back shows, until a bootstrap completes.
  await store.root.transaction(() => {
    void store.root.openDB({ name: 'meta' }).put('generation', store.generation() + 1)
  })
  t.assert.strictEqual(store.foreignGeneration(), true)
  await store.applyRecords([['users', 'bob', store.newUser('bob')]], { epoch: 'e', id: '1-0', seq: 1 })
  t.assert.strictEqual(store.foreignGeneration(), true, 'an apply does not hide it')
  await store.completeReplica({ epoch: 'e', id: '1-0', seq: 1 })
  t.assert.strictEqual(store.foreignGeneration(), false)
  t.assert.strictEqual(await store.detachReplica(), true)
  t.assert.strictEqual(store.replicaPosition(), undefined)
  await store.write((w) => w.putUser(store.newUser('dave')))
  t.assert.notStrictEqual(store.getUser('dave'), undefined)
  t.assert.strictEqual(await store.detachReplica(), false)
})
