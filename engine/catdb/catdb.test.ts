import { test, type TestContext } from 'node:test'
import { buildCats, tempStore as makeStore, type CatEntry } from '../testing/store.js'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { untilReady } from '../testing/processes.js'
import { HostKeys } from '../names/suffix-keys.js'
import { CategoryDb } from './index.js'

const tempStore = (t: TestContext): ReturnType<typeof makeStore> => makeStore(t, 'filterd-catdb-')

const build = buildCats

test('the suffix walk returns the most specific key that is in the table', async (t: TestContext) => {
  const { store } = tempStore(t)
  await build(store, [
    ['example.com', [10]],
    ['ads.example.com', [30, 31]]
  ])
  const db = new CategoryDb(store)
  t.assert.deepStrictEqual(db.categorize('x.ads.example.com'), { domain: 'ads.example.com', categories: [30, 31] })
  t.assert.deepStrictEqual(db.categorize('www.example.com'), { domain: 'example.com', categories: [10] })
  t.assert.deepStrictEqual(db.categorize('example.com'), { domain: 'example.com', categories: [10] })
  t.assert.strictEqual(db.categorize('example.org'), undefined)
  t.assert.strictEqual(db.categorize('com'), undefined)
})

test('URL entries match at path boundaries before the host record', async (t: TestContext) => {
  const { store } = tempStore(t)
  await build(store, [
    ['example.com', [10]],
    ['example.com/Games', [20], 'url'],
    ['example.com/Games/Poker', [21], 'url'],
    ['example.com/q?x=1', [22], 'url']
  ])
  const db = new CategoryDb(store)
  t.assert.deepStrictEqual(db.categorizeUrl('www.example.com', '/Games/Poker/table?id=3'), {
    domain: 'example.com/Games/Poker',
    categories: [21]
  })
  t.assert.deepStrictEqual(db.categorizeUrl('example.com', '/Games/chess'), {
    domain: 'example.com/Games',
    categories: [20]
  })
  t.assert.deepStrictEqual(db.categorizeUrl('example.com', '/games/chess'), { domain: 'example.com', categories: [10] })
  t.assert.deepStrictEqual(db.categorizeUrl('example.com', '/q?x=1'), { domain: 'example.com/q?x=1', categories: [22] })
  t.assert.strictEqual(db.categorizeUrl('example.org', '/Games'), undefined)
})

test('the lookup cache keeps a popular name through turnovers and reads each name once while it is held', async (t: TestContext) => {
  const { store } = tempStore(t)
  const names = Array.from({ length: 50 }, (_, i) => `n${i}.test`)
  await build(store, [['hot.test', [1]], ...names.map((n): [string, number[]] => [n, [2]])])
  const db = new CategoryDb(store, { cacheEntries: 8 }) // generations of 4 names
  // Every LMDB read of the table goes through the store's snapshot: count them.
  let reads = 0
  const snapshot = store.readSnapshot.bind(store)
  store.readSnapshot = () => {
    reads++
    return snapshot()
  }
  t.assert.deepStrictEqual(db.get('hot.test'), [1])
  for (const n of names) {
    t.assert.deepStrictEqual(db.get(n), [2])
    t.assert.deepStrictEqual(db.get('hot.test'), [1]) // asked between every other name
  }
  t.assert.strictEqual(reads, 1 + names.length) // hot.test once, each other name once
  t.assert.deepStrictEqual(db.get('n0.test'), [2]) // long turned over: read again
  t.assert.strictEqual(reads, 2 + names.length)
})

test("a name seen again costs no read and no decoding: its walk's result is kept, frozen, until a rebuild", async (t: TestContext) => {
  const { store } = tempStore(t)
  await build(store, [['example.com', [10, 11]]])
  const db = new CategoryDb(store, { cacheEntries: 2, nameCacheEntries: 64 }) // suffix keys turn over at once
  let reads = 0
  const snapshot = store.readSnapshot.bind(store)
  store.readSnapshot = () => {
    reads++
    return snapshot()
  }
  const first = db.findRaw(new HostKeys('a.b.example.com'))
  t.assert.deepStrictEqual(first?.cats, [10, 11])
  t.assert.strictEqual(first?.key, 'example.com')
  t.assert.ok(Object.isFrozen(first?.cats))
  const walked = reads
  t.assert.ok(walked >= 3, `the first walk read ${walked} keys`) // a.b.example.com, b.example.com, example.com
  const again = db.findRaw(new HostKeys('a.b.example.com'))
  t.assert.strictEqual(again?.cats, first?.cats, 'the same decoded categories, not a second decoding')
  t.assert.strictEqual(again?.key, 'example.com')
  t.assert.strictEqual(reads, walked)
  t.assert.strictEqual(db.findRaw(new HostKeys('nothing.example.org')), undefined)
  const afterMiss = reads
  t.assert.strictEqual(db.findRaw(new HostKeys('nothing.example.org')), undefined)
  t.assert.strictEqual(reads, afterMiss, 'a name with no entry is remembered too')
  t.assert.strictEqual(db.findRaw(new HostKeys('a.b.example.com'))?.cats, first?.cats)
  t.assert.strictEqual(reads, afterMiss)
  // A rebuild drops what was kept.
  await build(store, [['example.com', [12]]])
  db.refresh()
  t.assert.deepStrictEqual(db.findRaw(new HostKeys('a.b.example.com'))?.cats, [12])
})

test('a reader follows a rebuild only when it refreshes, and old versions are dropped', async (t: TestContext) => {
  const { store } = tempStore(t)
  await build(store, [['a.test', [1]]])
  const db = new CategoryDb(store)
  t.assert.strictEqual(db.activeVersion, 1)
  await build(store, [['b.test', [2]]])
  t.assert.deepStrictEqual(db.get('a.test'), [1])
  t.assert.strictEqual(db.refresh(), true)
  t.assert.strictEqual(db.get('a.test'), undefined)
  t.assert.deepStrictEqual(db.get('b.test'), [2])
  await build(store, [['c.test', [3]]])
  t.assert.strictEqual(store.root.openDB({ name: 'domains.1' }).getCount(), 0)
})

test('a rebuild while another process keeps reading never shows a mix of old and new', async (t: TestContext) => {
  const { store, path } = tempStore(t)
  // The build is written in many transactions (N / BATCH of them) while the reader reads, so a
  // builder that let a half-filled table go live would be seen doing it.
  const N = 20000
  const BATCH = 100
  const keys = Array.from({ length: N }, (_, i) => `host${i}.test`)
  await build(
    store,
    keys.map((k): CatEntry => [k, [1]]),
    { batchSize: BATCH }
  )
  // The reader refreshes and then reads every key in one turn: all must carry category 1 (old)
  // or all category 2 (new); anything else (a mix, or names missing) is a torn round. It stops
  // at the first torn round, or a few rounds after the new table appears, or after 30 s.
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import { Store } from ${JSON.stringify(new URL('../store/index.js', import.meta.url).href)}
    import { CategoryDb } from ${JSON.stringify(new URL('./index.js', import.meta.url).href)}
    const db = new CategoryDb(Store.open(${JSON.stringify(path)}))
    let rounds = 0, torn = 0, newRounds = 0
    const until = Date.now() + 30000
    console.log('ready')
    const loop = () => {
      db.refresh()
      const seen = new Set()
      for (let i = 0; i < ${N}; i++) seen.add(String(db.get('host' + i + '.test')))
      const value = seen.size === 1 ? [...seen][0] : 'mixed'
      if (value !== '1' && value !== '2') torn++
      if (value === '2') newRounds++
      rounds++
      if (torn > 0 || newRounds > 5 || Date.now() > until) { console.log(JSON.stringify({ rounds, torn, newRounds })); process.exit(0) }
      setImmediate(loop)
    }
    loop()
  `
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] }
  )
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d: string) => {
    out += d
  })
  // Listen before building: the reader may stop (at a torn round) while the build runs.
  const exited = once(child, 'exit')
  await untilReady(child.stdout, () => out, exited)
  await build(
    store,
    keys.map((k): CatEntry => [k, [2]]),
    { batchSize: BATCH }
  )
  const [code] = (await exited) as [number]
  t.assert.strictEqual(code, 0)
  const result = JSON.parse(out.split('\n')[1]!) as { rounds: number; torn: number; newRounds: number }
  t.assert.strictEqual(result.torn, 0)
  t.assert.ok(result.newRounds > 5, JSON.stringify(result))
})
