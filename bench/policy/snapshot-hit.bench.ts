// The policy's hit path: nanoseconds per `snapshotFor` of an address whose snapshot is cached. USERS users,
// one address each (FAMILY `v4` or `v6`), every address cached first; then ROUNDS rounds, each over every
// address once in a shuffled order, with new address strings each round (built before the round's clock
// starts), as the DNS server makes one from each packet's peer: a string's hash, cached in the string,
// is paid once per query, as in the server. Prints the best and the median round. It uses only `new Policy` and
// `snapshotFor`, so the compiled file runs against an older build too (copy it into that build's
// dist/bench/policy/): the two numbers in the same run of the machine are the comparison.
// Run: npm run build && node dist/bench/policy/snapshot-hit.bench.js [USERS=1000] [FAMILY=v4] [ROUNDS=9]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CategoryDb } from '../../engine/catdb/index.js'
import { Policy, loadSafeHosts } from '../../engine/policy/index.js'
import { Store } from '../../engine/store/index.js'
import { createBuiltinWhitelist } from '../../engine/whitelist/index.js'

const USERS = Number(process.argv[2] ?? 1000)
const FAMILY = process.argv[3] ?? 'v4'
const ROUNDS = Number(process.argv[4] ?? 9)
if (FAMILY !== 'v4' && FAMILY !== 'v6') throw new Error(`FAMILY is v4 or v6, not ${FAMILY}`)
// At least 300,000 calls a round: a small cache is gone over several times.
const PASSES = Math.max(1, Math.ceil(300_000 / USERS))
const BATCH = 5000

// Canonical text, as the DNS server passes a peer's address (engine/net/ip.ts formatIp).
const address = (i: number): string =>
  FAMILY === 'v4'
    ? `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`
    : `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::${(i % 251) + 1}`

const tmp = mkdtempSync(join(tmpdir(), 'filterd-snaphit-'))
const store = Store.open(join(tmp, 'db'))
for (let start = 0; start < USERS; start += BATCH) {
  await store.write((w) => {
    for (let i = start; i < Math.min(USERS, start + BATCH); i++) {
      const name = `u${i}`
      w.putUser({ ...store.newUser(name), filter: [i % 7], ip: [address(i)] })
      w.claimAddresses(name, [address(i)])
    }
  })
}
const policy = new Policy({
  store,
  categories: new CategoryDb(store),
  builtin: createBuiltinWhitelist([]),
  safeHosts: loadSafeHosts(undefined),
  maxCachedAddresses: USERS
})
policy.watcher.stop()
for (let i = 0; i < USERS; i++) policy.snapshotFor(address(i))
const built = policy.snapshotsBuilt

// A fixed shuffle (a linear congruential generator), the same in every build.
const order = Array.from({ length: USERS }, (_, i) => i)
let seed = 12345
for (let i = USERS - 1; i > 0; i--) {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
  const j = seed % (i + 1)
  ;[order[i], order[j]] = [order[j]!, order[i]!]
}

const perCall: number[] = []
let sink = 0
for (let r = 0; r < ROUNDS; r++) {
  const texts: string[] = []
  for (let p = 0; p < PASSES; p++) for (const i of order) texts.push(address(i))
  const t0 = process.hrtime.bigint()
  for (const text of texts) if (policy.snapshotFor(text).user !== null) sink++
  perCall.push(Number(process.hrtime.bigint() - t0) / texts.length)
}
if (policy.snapshotsBuilt !== built) throw new Error(`${policy.snapshotsBuilt - built} misses: not the hit path`)
if (sink !== ROUNDS * PASSES * USERS) throw new Error('an address without its user')
perCall.sort((a, b) => a - b)
console.log(
  JSON.stringify({
    node: process.version,
    users: USERS,
    family: FAMILY,
    callsPerRound: PASSES * USERS,
    bestNs: +perCall[0]!.toFixed(1),
    medianNs: +perCall[Math.floor(ROUNDS / 2)]!.toFixed(1)
  })
)
await store.close()
rmSync(tmp, { recursive: true, force: true })
