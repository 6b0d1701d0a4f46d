/**
 * The replica protocol against a real redis-server, in one process: hosts are stores in their own
 * folders, each with a follower; writes go through the Lua commit (engine/replica).
 */
import { isDeepStrictEqual } from 'node:util'
import type { Redis } from 'ioredis'
import { after, before, test, type TestContext } from 'node:test'
import { silentLogger } from '../log/index.js'
import type { Store, StoreOp, UserRecord } from '../store/index.js'
import { redisClient, startRedis, type TestRedis } from '../testing/redis.js'
import { commitToSharedStore } from './commit.js'
import { Follower, seedSharedStore } from './follower.js'
import { linkedHost, linkStore, testSettings } from '../testing/replica.js'
import { addUser, tempStore } from '../testing/store.js'
import { until } from '../testing/wait.js'
import { parseStored, storedValue, tombstoneVersion, type SharedStoreSettings } from './redis.js'
import { pack } from 'msgpackr'

let redis: TestRedis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis.stop()
})

const host = (t: TestContext): Store => tempStore(t, 'filterd-replica-').store

const client = (t: TestContext): Redis => redisClient(t, redis)

/** The store's replica applies (engine/store/replica.ts), each one transaction. */
const APPLIES = ['startBootstrap', 'copySnapshot', 'applyBootstrap', 'applyRecords', 'completeReplica'] as const
type ApplyName = (typeof APPLIES)[number]

/** Runs `before` ahead of, and `after` behind, each replica apply of `s` (to inject writes, or look). */
function aroundApplies(
  s: Store,
  hooks: { before?: (name: ApplyName, args: unknown[]) => Promise<void>; after?: (name: ApplyName) => void }
): void {
  for (const name of APPLIES) {
    const original = (s[name] as (...a: unknown[]) => Promise<unknown>).bind(s)
    Object.assign(s, {
      [name]: async (...args: unknown[]): Promise<unknown> => {
        await hooks.before?.(name, args)
        const r = await original(...args)
        hooks.after?.(name)
        return r
      }
    })
  }
}

/** Everything a host's policy holds, for comparing replicas. */
function dump(s: Store): unknown {
  return {
    users: [...s.users()],
    ips: s.addressesWithPrefix('', 10_000),
    black: s.getList(null, 'black'),
    config: s.getServerDefaults()
  }
}

test('a write on one host reaches the other; concurrent writes to one user end in the same state everywhere', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const { store: a } = await linkedHost(t, settings)
  const { store: b } = await linkedHost(t, settings)
  await addUser(a, { name: 'alice', ip: ['10.0.0.1'] }, { black: ['ads.example'] })
  await until('B applying', () => b.getUser('alice') !== undefined)
  t.assert.strictEqual(b.userForAddress('10.0.0.1'), 'alice')
  t.assert.deepStrictEqual(b.getList('alice', 'black'), ['ads.example'])
  // 20 writes racing from both hosts on one user: Redis orders them, every host applies that order.
  await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const s = i % 2 === 0 ? a : b
      await s.write((w) => {
        w.putUser({ ...w.store.getUser('alice')!, filter: [i] })
      })
    })
  )
  await until(
    'both replicas at the same position',
    () => a.replicaPosition()?.seq === b.replicaPosition()?.seq && a.replicaPosition()!.seq >= 21
  )
  t.assert.deepStrictEqual(dump(a), dump(b))
  t.assert.ok(b.generation() > 1, 'each apply bumps the generation')
})

test('a failed write changes nothing anywhere; with Redis refusing, the write throws and nothing is kept locally', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const { store: a } = await linkedHost(t, settings)
  await addUser(a, { name: 'alice', ip: ['10.0.0.1'] })
  const seq = a.replicaPosition()!.seq
  await t.assert.rejects(
    a.write((w) => {
      w.putUser({ ...w.store.newUser('bob'), ip: [] })
      throw new Error('invalid')
    }),
    /invalid/
  )
  // The shared store with another epoch (as after a reseed elsewhere): the script refuses.
  const r = client(t)
  await r.set(settings.keys.epoch, 'init:someone-else')
  await t.assert.rejects(addUser(a, { name: 'carol', ip: ['10.0.0.3'] }), { code: 'ENGINE_SHARED_STORE_UNAVAILABLE' })
  t.assert.strictEqual(a.getUser('bob'), undefined)
  t.assert.strictEqual(a.getUser('carol'), undefined)
  t.assert.strictEqual(await r.hexists(settings.keys.hash.users, 'carol'), 0)
  t.assert.strictEqual(a.replicaPosition()!.seq, seq)
})

test('an apply that fails midway leaves neither its changes nor its position; the follower resumes from the last one', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const a = host(t)
  const b = host(t)
  const la = await linkStore(a, settings, silentLogger())
  t.after(async () => {
    await la.close()
  })
  const lb = await linkStore(b, settings, silentLogger())
  await addUser(a, { name: 'alice', ip: ['10.0.0.1'] })
  await until('B applying', () => b.replicaPosition()?.seq === 1)
  await lb.close()
  const before = b.replicaPosition()!
  const generation = b.generation()
  // A transaction that dies after writing some keys (as a process killed mid-apply would).
  await t.assert.rejects(
    b.applyRecords(
      [
        ['users', 'zed', { name: 'zed' }],
        ['users', 'x'.repeat(4000), { bad: 'key longer than LMDB allows' }]
      ],
      { ...before, seq: 99, id: '9-9' }
    )
  )
  t.assert.strictEqual(b.getUser('zed'), undefined)
  t.assert.deepStrictEqual(b.replicaPosition(), before)
  t.assert.strictEqual(b.generation(), generation)
  for (let i = 0; i < 5; i++) await addUser(a, { name: `u${i}`, ip: [`10.0.1.${i}`] })
  const lb2 = await linkStore(b, settings, silentLogger())
  t.after(async () => {
    await lb2.close()
  })
  await until('B catching up', () => b.replicaPosition()?.seq === 6)
  t.assert.strictEqual(lb2.follower.status.bootstraps, 0, 'resumed from its position, no bootstrap')
  t.assert.deepStrictEqual(dump(a), dump(b))
})

test("a host behind the stream's retention, or joining late, bootstraps and then follows", async (t: TestContext) => {
  const settings: SharedStoreSettings = { ...testSettings(redis.host, redis.port), streamLength: 5 }
  const { store: a } = await linkedHost(t, settings)
  const b = host(t)
  const lb = await linkStore(b, settings, silentLogger())
  await addUser(a, { name: 'first', ip: ['10.9.0.1'] })
  await until('B applying', () => b.replicaPosition()?.seq === 1)
  await lb.close()
  // 400 records while B is away: the stream keeps only the last hundred or so (MAXLEN ~ 5).
  const r = client(t)
  const epoch = a.replicaPosition()!.epoch
  for (let i = 0; i < 400; i++) {
    await commitToSharedStore(r, settings, epoch, [['users', `bulk${i}`, { ...a.newUser(`bulk${i}`) }]])
  }
  t.assert.ok((await r.xlen(settings.keys.changes)) < 400)
  await until('A applying', () => a.replicaPosition()?.seq === 401)
  const lb2 = await linkStore(b, settings, silentLogger())
  t.after(async () => {
    await lb2.close()
  })
  await until('B current', () => b.replicaPosition()?.seq === 401)
  t.assert.ok(lb2.follower.status.bootstraps >= 1, 'bootstrapped')
  t.assert.strictEqual(b.userCount(), 401)
  // A late host: empty, bootstraps, then follows new writes.
  const c = host(t)
  const lc = await linkStore(c, settings, silentLogger())
  t.after(async () => {
    await lc.close()
  })
  t.assert.strictEqual(c.userCount(), 401)
  await addUser(b, { name: 'late', ip: ['10.9.9.9'] })
  await until('A and C applying', () => c.getUser('late') !== undefined && a.getUser('late') !== undefined)
  t.assert.deepStrictEqual(dump(a), dump(c))
  t.assert.deepStrictEqual(dump(b), dump(c))
})

test('Redis emptied: hosts keep their replicas and say so; a reseed from one replica is adopted by the others', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const { store: a, link: la } = await linkedHost(t, settings)
  const { store: b, link: lb } = await linkedHost(t, settings)
  await addUser(a, { name: 'alice', ip: ['10.0.0.1'] }, { black: ['ads.example'] })
  await until('B applying', () => b.getUser('alice') !== undefined)
  const r = client(t)
  const keys = await r.keys(`${settings.keys.epoch.slice(0, -'epoch'.length)}*`)
  await r.del(...keys)
  await until(
    'both hosts noticing',
    () => la.follower.status.state === 'redis-lost' && lb.follower.status.state === 'redis-lost'
  )
  t.assert.strictEqual(b.userForAddress('10.0.0.1'), 'alice', 'replica kept')
  await t.assert.rejects(addUser(b, { name: 'bob', ip: ['10.0.0.2'] }), { code: 'ENGINE_SHARED_STORE_UNAVAILABLE' })
  // A follower that starts on an empty store never initializes over a kept replica either.
  t.assert.strictEqual(await r.get(settings.keys.epoch), null)
  // The operator reseeds from A (filterd redis-seed): B adopts it, both follow, writes work.
  const epoch = await seedSharedStore(r, settings, a, 'reseed')
  await a.completeReplica({ epoch, id: '0-0', seq: 0 })
  await until(
    'B adopting the reseeded store',
    () => lb.follower.status.state === 'following' && b.replicaPosition()?.epoch === epoch
  )
  await addUser(b, { name: 'bob', ip: ['10.0.0.2'] })
  await until('A applying', () => a.getUser('bob') !== undefined)
  t.assert.deepStrictEqual(dump(a), dump(b))
})

test('a host whose replica came from another store is kept apart (epoch mismatch), never wiped', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const a = host(t)
  const la = await linkStore(a, settings, silentLogger())
  await addUser(a, { name: 'alice', ip: ['10.0.0.1'] })
  await la.close()
  const r = client(t)
  await r.set(settings.keys.epoch, 'init:another-store')
  const f = new Follower(a, settings, { logger: silentLogger() })
  f.start()
  t.after(async () => {
    await f.close()
  })
  await until('the mismatch', () => f.status.state === 'epoch-mismatch')
  t.assert.strictEqual(a.userForAddress('10.0.0.1'), 'alice')
})

test('hash values carry their version; values written before versions read as version 0', (t: TestContext) => {
  t.assert.deepStrictEqual(parseStored(storedValue(42, { a: 1 })), { version: 42, value: { a: 1 } })
  t.assert.deepStrictEqual(parseStored(Buffer.from('17:')), { version: 17, value: undefined }, 'a tombstone')
  t.assert.deepStrictEqual(parseStored(pack({ name: 'x' })), { version: 0, value: { name: 'x' } })
  t.assert.deepStrictEqual(parseStored(pack(7)), { version: 0, value: 7 }, 'a one-byte value that is a digit')
  t.assert.deepStrictEqual(parseStored(pack('12:ab')), { version: 0, value: '12:ab' })
  t.assert.strictEqual(tombstoneVersion(Buffer.from('17:')), 17)
  t.assert.strictEqual(tombstoneVersion(storedValue(17, 'x')), undefined)
  t.assert.strictEqual(tombstoneVersion(pack(':')), undefined)
})

test('a deleted key leaves a tombstone with its version, dropped once older than the stream keeps', async (t: TestContext) => {
  const settings: SharedStoreSettings = { ...testSettings(redis.host, redis.port), streamLength: 5 }
  const { store: a } = await linkedHost(t, settings)
  const r = client(t)
  const epoch = a.replicaPosition()!.epoch
  await commitToSharedStore(r, settings, epoch, [['users', 'gone', a.newUser('gone')]])
  const { seq } = await commitToSharedStore(r, settings, epoch, [['users', 'gone']])
  t.assert.deepStrictEqual(parseStored((await r.hgetBuffer(settings.keys.hash.users, 'gone'))!), {
    version: seq,
    value: undefined
  })
  t.assert.strictEqual(await r.zcard(settings.keys.tombs), 1)
  for (let i = 0; i < 10; i++) await commitToSharedStore(r, settings, epoch, [['users', `u${i}`, a.newUser(`u${i}`)]])
  t.assert.strictEqual(await r.hexists(settings.keys.hash.users, 'gone'), 0)
  t.assert.strictEqual(await r.zcard(settings.keys.tombs), 0)
  t.assert.ok(Number(await r.get(settings.keys.tombfloor)) >= seq)
  await until('A applying', () => a.replicaPosition()?.seq === seq + 10)
  t.assert.strictEqual(a.getUser('gone'), undefined)
})

/**
 * The bootstrap guarantee. Host B bootstraps while writes land in Redis after its snapshot
 * point and between its HSCAN calls (injected when B's store applies a bootstrap batch, so the
 * interleaving does not depend on timing). Every write reaches B, and no key change is applied
 * twice or over a newer one: each user's applied markers only grow, and a user deleted after the
 * snapshot never gets its superseded value back. Before per-key versions, B replayed the records
 * after the snapshot over the newer values HSCAN had copied (alice went back from marker 7 to 1).
 */
test('a bootstrap under concurrent writes: every write present, no double apply, never an older value over a newer one', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const { store: a } = await linkedHost(t, settings)
  const r = client(t)
  const epoch = a.replicaPosition()!.epoch
  let marker = 0
  const user = (id: string): UserRecord => ({ ...a.newUser(id), filter: [++marker] })
  // Enough users for several HSCAN calls and bootstrap batches.
  const FILL = 12_000
  for (let i = 0; i < FILL; i += 1000) {
    await commitToSharedStore(
      r,
      settings,
      epoch,
      Array.from({ length: 1000 }, (_, k): StoreOp => ['users', `fill${i + k}`, user(`fill${i + k}`)])
    )
  }
  await commitToSharedStore(r, settings, epoch, [
    ['users', 'alice', user('alice')],
    ['users', 'carol', user('carol')]
  ])
  const carolAtSnapshot = marker
  const changed = new Set<string>()
  const write = async (ops: StoreOp[]): Promise<void> => {
    for (const [, key] of ops) changed.add(key)
    await commitToSharedStore(r, settings, epoch, ops)
  }

  const b = host(t)
  const applied: Array<{ key: string; marker: number | undefined }> = []
  let injections = 0
  let deleted = false
  aroundApplies(b, {
    async before(name, args) {
      if (name === 'startBootstrap' || (b.replicaState() === 'bootstrapping' && name !== 'applyRecords')) {
        if (injections < 4) {
          injections++
          // After the snapshot point and before (or between) HSCAN calls.
          for (let k = 0; k < 3; k++) await write([['users', 'alice', user('alice')]])
          await write([
            ['users', `new${injections}`, user(`new${injections}`)],
            ['users', `fill${injections * 7}`, user(`fill${injections * 7}`)]
          ])
          if (!deleted) {
            deleted = true
            await write([['users', 'carol', user('carol')]])
            await write([['users', 'carol']])
            await write([['users', 'dave', user('dave')]])
            await write([['users', 'dave']])
            await write([['users', 'dave', user('dave')]])
          }
        }
      }
      // What this call writes: the copies of keys whose value differs (each once), then the changes.
      const [copies, ops] =
        name === 'copySnapshot'
          ? (args as [StoreOp[], StoreOp[]])
          : [[], name === 'applyBootstrap' || name === 'applyRecords' ? (args[0] as StoreOp[]) : []]
      const copied = new Set<string>()
      for (const [db, key, value] of copies) {
        if (db !== 'users' || copied.has(key) || isDeepStrictEqual(b.getUser(key), value)) continue
        copied.add(key)
        applied.push({ key, marker: (value as UserRecord).filter[0] })
      }
      for (const [db, key, value] of ops) {
        if (db === 'users') applied.push({ key, marker: (value as UserRecord | undefined)?.filter[0] })
      }
    }
  })
  const f = new Follower(b, settings, { logger: silentLogger() })
  f.start()
  t.after(async () => {
    await f.close()
  })
  await until('B bootstrapped', () => f.status.bootstraps === 1 && f.status.state === 'following')
  t.assert.ok(injections >= 2, `writes landed during the bootstrap (${injections} times)`)
  const last = Number(await r.get(settings.keys.seq))
  await until('both replicas current', () => b.replicaPosition()?.seq === last && a.replicaPosition()?.seq === last)

  // (a) Every write is present: B holds what Redis and A hold.
  const inRedis = new Map<string, unknown>()
  for (const [key, raw] of Object.entries(await r.hgetallBuffer(settings.keys.hash.users))) {
    const { value } = parseStored(raw)
    if (value !== undefined) inRedis.set(key, value)
  }
  const held = (s: Store): Map<string, unknown> =>
    new Map([...s.entries('users')].map(({ key, value }) => [key, value]))
  t.assert.deepStrictEqual(held(b), inRedis)
  t.assert.deepStrictEqual(held(b), held(a))
  t.assert.strictEqual(b.getUser('carol'), undefined)
  t.assert.strictEqual(b.getUser('dave')!.filter[0], (inRedis.get('dave') as UserRecord).filter[0])

  // (b) No key change applied twice or over a newer one.
  const byKey = new Map<string, Array<number | undefined>>()
  for (const { key, marker: m } of applied) byKey.set(key, [...(byKey.get(key) ?? []), m])
  for (const [key, markers] of byKey) {
    const puts = markers.filter((m): m is number => m !== undefined)
    for (let i = 1; i < puts.length; i++) {
      t.assert.ok(puts[i]! > puts[i - 1]!, `${key}: applied markers ${markers.join(',')} go back or repeat`)
    }
  }
  const carol = byKey.get('carol') ?? []
  t.assert.ok(
    !carol.some((m) => m !== undefined && m > carolAtSnapshot),
    `carol's value written after the snapshot and deleted before the copy was applied: ${carol.join(',')}`
  )
  const untouched = [...byKey].filter(([key]) => !changed.has(key))
  t.assert.ok(
    untouched.every(([, m]) => m.length === 1),
    'every user unchanged during the bootstrap copied once'
  )
  t.assert.strictEqual(untouched.length, FILL - [...changed].filter((k) => k.startsWith('fill')).length)
  t.assert.ok(f.status.skippedOps > 0, 'records the copy already held were skipped')
  t.assert.ok(f.status.appliedOps >= FILL, 'the counter counts the copies')
})

test("a bootstrap outlasted by the stream's retention (records and tombstones dropped meanwhile) starts over and ends equal to Redis", async (t: TestContext) => {
  const settings: SharedStoreSettings = { ...testSettings(redis.host, redis.port), streamLength: 5 }
  const { store: a } = await linkedHost(t, settings)
  const r = client(t)
  const epoch = a.replicaPosition()!.epoch
  for (let i = 0; i < 20; i++) await commitToSharedStore(r, settings, epoch, [['users', `u${i}`, a.newUser(`u${i}`)]])
  const b = host(t)
  let clears = 0
  aroundApplies(b, {
    async before(name) {
      if (name === 'startBootstrap' && ++clears === 1) {
        // During the first bootstrap: a delete, then more writes than the stream keeps.
        await commitToSharedStore(r, settings, epoch, [['users', 'u3']])
        for (let i = 0; i < 30; i++)
          await commitToSharedStore(r, settings, epoch, [['users', `v${i}`, a.newUser(`v${i}`)]])
      }
    }
  })
  const f = new Follower(b, settings, { logger: silentLogger() })
  f.start()
  t.after(async () => {
    await f.close()
  })
  const last = 51
  await until('B current', () => b.replicaPosition()?.seq === last && f.status.state === 'following')
  t.assert.strictEqual(clears, 2, 'the first bootstrap started over')
  t.assert.ok(Number(await r.get(settings.keys.tombfloor)) > 20, 'the tombstone was dropped during the first bootstrap')
  t.assert.strictEqual(b.getUser('u3'), undefined)
  t.assert.strictEqual(b.userCount(), 19 + 30)
  await until('A current', () => a.replicaPosition()?.seq === last)
  t.assert.deepStrictEqual(dump(b), dump(a))
})

test('a host that fell behind the stream keeps serving its replica while it bootstraps again in place', async (t: TestContext) => {
  const settings: SharedStoreSettings = { ...testSettings(redis.host, redis.port), streamLength: 5 }
  const { store: a } = await linkedHost(t, settings)
  const b = host(t)
  const lb = await linkStore(b, settings, silentLogger())
  for (const id of ['alice', 'bob', 'carol'])
    await addUser(a, { name: id, ip: [`10.7.0.${id.length}${id.charCodeAt(0) % 10}`] }, { black: [`${id}.example`] })
  await until('B applying', () => b.getUser('carol') !== undefined)
  await lb.close()
  // While B is away: bob deleted, carol changed, and more records than the stream keeps.
  await a.write((w) => {
    w.deleteUser('bob')
  })
  await a.write((w) => {
    w.putList('carol', 'black', ['changed.example'])
  })
  const r = client(t)
  const epoch = a.replicaPosition()!.epoch
  for (let i = 0; i < 300; i++)
    await commitToSharedStore(r, settings, epoch, [['users', `bulk${i}`, a.newUser(`bulk${i}`)]])
  // B's DNS server reads its store during the bootstrap: alice, unchanged, is there throughout.
  const missing: string[] = []
  aroundApplies(b, {
    after() {
      if (
        b.userForAddress(a.getUser('alice')!.ip[0]!) !== 'alice' ||
        b.getList('alice', 'black')[0] !== 'alice.example'
      )
        missing.push(b.replicaState() ?? '?')
    }
  })
  const f = new Follower(b, settings, { logger: silentLogger() })
  f.start()
  t.after(async () => {
    await f.close()
  })
  const last = Number(await r.get(settings.keys.seq))
  await until('B current', () => b.replicaPosition()?.seq === last && f.status.state === 'following')
  await until('A current', () => a.replicaPosition()?.seq === last)
  t.assert.strictEqual(f.status.bootstraps, 1)
  t.assert.deepStrictEqual(missing, [], 'alice stayed in the replica during the bootstrap')
  t.assert.strictEqual(b.getUser('bob'), undefined, 'deleted while away: swept')
  t.assert.strictEqual(b.userForAddress(a.getUser('alice')!.ip[0]!), 'alice')
  t.assert.deepStrictEqual(b.getList('carol', 'black'), ['changed.example'])
  t.assert.deepStrictEqual(dump(b), dump(a))
  t.assert.strictEqual(b.userCount(), a.userCount())
})
