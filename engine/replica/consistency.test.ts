/**
 * The shared store's consistency under races and faults, against real redis-servers: requests of two
 * hosts racing on the same keys, a record committed just as a follower's read times out, and Redis
 * going back (restored from an older copy of its data) after the hosts applied later records.
 */
import { cpSync, rmSync } from 'node:fs'
import { after, before, test, type TestContext } from 'node:test'
import { silentLogger } from '../log/index.js'
import type { Store } from '../store/index.js'
import { tempDir } from '../testing/temp.js'
import { redisClient, startRedis, type TestRedis } from '../testing/redis.js'
import { commitToSharedStore } from './commit.js'
import { adoptSharedStore, Follower } from './follower.js'
import { linkedHost, testSettings } from '../testing/replica.js'
import { tempStore } from '../testing/store.js'
import { until } from '../testing/wait.js'

let redis: TestRedis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis.stop()
})

const host = (t: TestContext): Store => tempStore(t, 'filterd-consistency-').store

/** Every user's addresses map back to it, and every mapped address is listed by its user. */
function linksOf(s: Store): { users: Record<string, string[]>; ips: Record<string, string> } {
  const users: Record<string, string[]> = {}
  for (const u of s.users()) users[u.name] = [...u.ip].sort()
  const ips: Record<string, string> = {}
  for (const { address, user } of s.addressesWithPrefix('', 10_000)) ips[address] = user
  return { users, ips }
}

function assertLinked(t: TestContext, s: Store, label: string): void {
  const { users, ips } = linksOf(s)
  for (const [address, user] of Object.entries(ips)) {
    t.assert.ok(
      users[user]?.includes(address),
      `${label}: ${address} maps to ${user}, which does not list it (${JSON.stringify(users[user])})`
    )
  }
  for (const [user, list] of Object.entries(users)) {
    for (const address of list)
      t.assert.strictEqual(ips[address], user, `${label}: ${user} lists ${address}, mapped to ${ips[address]}`)
  }
}

/** The billing system's PUT of a user's addresses, as the api role makes it (api/context.ts setAddresses). */
async function setAddresses(s: Store, id: string, ip: string[]): Promise<void> {
  await s.write((w) => {
    const user = w.store.getUser(id) ?? w.store.newUser(id)
    const lost = user.ip.filter((a) => !ip.includes(a))
    if (lost.length > 0) w.releaseAddresses(id, lost)
    w.claimAddresses(id, ip)
    w.putUser({ ...user, ip })
  })
}

test('two hosts, or two requests of one host, changing the same user and the same address at once: one request wins whole, no address is left linked to a user that does not list it', async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const { store: a } = await linkedHost(t, settings)
  const { store: b } = await linkedHost(t, settings)
  await setAddresses(a, 'alice', ['10.0.0.1'])
  await until('B applying', () => b.getUser('alice') !== undefined)
  for (let round = 0; round < 20; round++) {
    // The same user moved to two new addresses from two hosts, and one address claimed by two users.
    await Promise.all([
      setAddresses(a, 'alice', [`10.1.${round}.1`]),
      setAddresses(b, 'alice', [`10.2.${round}.1`]),
      setAddresses(a, `bob${round}`, [`10.3.${round}.1`]),
      setAddresses(b, `carol${round}`, [`10.3.${round}.1`]),
      // Two requests of one host at once: they run concurrently too, ordered by the same check.
      setAddresses(a, 'dave', [`10.4.${round}.1`]),
      setAddresses(a, 'dave', [`10.5.${round}.1`])
    ])
  }
  await until('both replicas at one position', () => a.replicaPosition()?.seq === b.replicaPosition()?.seq)
  assertLinked(t, a, 'host A')
  assertLinked(t, b, 'host B')
  t.assert.deepStrictEqual(linksOf(a), linksOf(b))
  t.assert.strictEqual(a.getUser('alice')!.ip.length, 1, 'alice holds the address of one request, not a mix')
  t.assert.strictEqual(a.getUser('dave')!.ip.length, 1, 'so does dave, written twice at once from one host')
})

test("a record committed just after the follower's read found nothing is read next, not taken for a trimmed stream", async (t: TestContext) => {
  const settings = testSettings(redis.host, redis.port)
  const { store: a } = await linkedHost(t, settings)
  const r = redisClient(t, redis)
  const epoch = a.replicaPosition()!.epoch
  const b = host(t)
  let injected = 0
  const f = new Follower(b, settings, {
    logger: silentLogger(),
    // In the window between the read that timed out and the read of `seq`: a write from another host.
    onIdleRead: async () => {
      if (injected >= 3) return
      injected++
      await commitToSharedStore(r, settings, epoch, [['users', `late${injected}`, a.newUser(`late${injected}`)]])
    }
  })
  f.start()
  t.after(async () => {
    await f.close()
  })
  await until('the three writes applied', () => b.getUser('late3') !== undefined, 20_000)
  t.assert.strictEqual(f.status.bootstraps, 1, 'only the first start bootstrapped')
  t.assert.strictEqual(f.status.state, 'following')
})

test("Redis going back (an older copy of its data restored): hosts stop following loudly, keep their replicas and refuse writes; adopting Redis's state brings them back in step", async (t: TestContext) => {
  const own = await startRedis()
  t.after(async () => {
    await own.stop()
  })
  const settings = testSettings(own.host, own.port)
  const { store: a, link: la } = await linkedHost(t, settings)
  const { store: b, link: lb } = await linkedHost(t, settings)
  await setAddresses(a, 'alice', ['10.0.0.1'])
  await until('B applying', () => b.getUser('alice') !== undefined)
  // A copy of Redis's data now (alice), then two more writes that the copy lacks.
  await own.stop({ keepData: true })
  const saved = tempDir(t, 'filterd-redis-copy-')
  cpSync(own.dir, saved, { recursive: true })
  await own.start()
  await until(
    'both following again',
    () => la.follower.status.state === 'following' && lb.follower.status.state === 'following',
    20_000
  )
  await setAddresses(a, 'bob', ['10.0.0.2'])
  await setAddresses(b, 'carol', ['10.0.0.3'])
  await until('both at 3 records', () => a.replicaPosition()?.seq === 3 && b.replicaPosition()?.seq === 3)
  await own.kill()
  rmSync(own.dir, { recursive: true, force: true })
  cpSync(saved, own.dir, { recursive: true })
  await own.start()
  await until(
    'both hosts noticing',
    () => la.follower.status.state === 'redis-behind' && lb.follower.status.state === 'redis-behind',
    20_000
  )
  t.assert.strictEqual(b.replicaState(), 'redis-behind', 'the state is kept with the replica')
  t.assert.strictEqual(b.userForAddress('10.0.0.3'), 'carol', 'replica kept')
  await t.assert.rejects(setAddresses(a, 'dave', ['10.0.0.4']), {
    code: 'ENGINE_SHARED_STORE_UNAVAILABLE',
    message: /Redis lost change records this host had applied \(state redis-behind\)/
  })
  const r = redisClient(t, own)
  const epoch = a.replicaPosition()!.epoch
  // The commit script itself refuses a request computed on a replica ahead of Redis.
  await t.assert.rejects(
    commitToSharedStore(r, settings, epoch, [['users', 'eve', a.newUser('eve')]], 3),
    /fewer change records \(1\) than this host applied \(3\)/
  )
  // A write Redis takes anyway (a host that lagged), reusing number 2: no host applies it silently.
  await commitToSharedStore(r, settings, epoch, [['users', 'frank', a.newUser('frank')]])
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.assert.strictEqual(a.getUser('frank'), undefined)
  t.assert.strictEqual(lb.follower.status.state, 'redis-behind')
  // A follower started again on the stopped replica stays stopped (no bootstrap over it).
  await lb.close()
  const fb = new Follower(b, settings, { logger: silentLogger() })
  fb.start()
  t.after(async () => {
    await fb.close()
  })
  await until('B stopped again', () => fb.status.state === 'redis-behind')
  t.assert.strictEqual(fb.status.bootstraps, 0)
  // The operator adopts what Redis holds (`filterd redis-seed --adopt`): every host bootstraps from it.
  await adoptSharedStore(r, settings)
  await until(
    "both following Redis's state",
    () =>
      la.follower.status.state === 'following' &&
      fb.status.state === 'following' &&
      a.getUser('bob') === undefined &&
      b.getUser('carol') === undefined,
    20_000
  )
  t.assert.ok(a.getUser('frank') !== undefined && b.getUser('frank') !== undefined)
  t.assert.deepStrictEqual(linksOf(a), linksOf(b))
  await setAddresses(a, 'gina', ['10.0.0.7'])
  await until('B applying', () => b.getUser('gina') !== undefined)
})
