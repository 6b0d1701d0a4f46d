// Data for the end-to-end schedule benchmark (bench/dns/schedule-e2e.sh): a 100,000-name
// category table, USERS users without schedules on 127.1.0.0 + i and USERS users each with a
// two-window schedule on 127.129.0.0 + i (every address of 127.0.0.0/8 is local, so the load client
// sends from each with IP_PKTINFO), the query names and two filterd configs (native UDP, inline, 1 process; ports LISTEN_PORT and +1).
// Usage: node dist/bench/dns/schedule-e2e-setup.js DIR UPSTREAM_PORT LISTEN_PORT [USERS=100000] [DISTINCT=1000]
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATEGORY } from '../../engine/categories/index.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import { Store } from '../../engine/store/index.js'
import { fillScheduleStore } from './schedule-fill.js'

const dir = process.argv[2]!
const upstreamPort = Number(process.argv[3])
const listen = Number(process.argv[4])
const USERS = Number(process.argv[5] ?? 100_000)
const DISTINCT = Number(process.argv[6] ?? 1000)

/** User i's address: 127.1.0.0 + i without schedules, 127.129.0.0 + i with one. */
function address(scheduled: boolean, i: number): string {
  return `127.${(scheduled ? 129 : 1) + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`
}

const pad = (n: number): string => String(n).padStart(2, '0')

/** Two windows every day (one of DISTINCT variants): social networks blocked 06:xx-07:xx and 16:00-2x:xx UTC. */
function rule(i: number): ScheduledRule {
  const k = i % DISTINCT
  const days: ScheduledRule['windows'][number]['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
  return {
    name: 'homework',
    timezone: 'UTC',
    windows: [
      { days, from: `06:${pad(k % 60)}`, to: `07:${pad(Math.floor(k / 60) % 60)}` },
      { days, from: '16:00', to: `${20 + (Math.floor(k / 60) % 4)}:${pad(k % 60)}` }
    ],
    filter: [CATEGORY.SOCIAL_NETWORKS]
  }
}

const store = Store.open(join(dir, 'db'))
await fillScheduleStore(store, USERS, address, rule)
await store.close()
// An eighth of the names blocked for everyone (Gambling), an eighth by the schedule while open, the rest forwarded.
const names = Array.from({ length: 4096 }, (_, i) => `www.site${(i * 7919) % 100_000}.example A`)
writeFileSync(join(dir, 'queries.txt'), names.join('\n') + '\n')
// Two servers on the same store, one queried by the users without schedules and one by those with (or,
// with ONE=1, the first for both): proxy.policy-cache-addresses holds both sides' addresses and the
// probes', so one process serving both never empties its cache.
for (const [side, port] of [
  ['plain', listen],
  ['scheduled', listen + 1]
] as const) {
  const config = {
    dnscache: { forward: [`127.0.0.1:${upstreamPort}`] },
    proxy: {
      listen: [`127.0.0.1:${port}`],
      'blockpage-ip': ['192.0.2.1'],
      ttl: 60,
      log: join(dir, `${side}.log`),
      pid: join(dir, `${side}.pid`),
      'log-level': 'warn',
      io: 'native',
      dispatch: 'inline',
      processes: 1,
      'policy-cache-addresses': 2 * USERS + 1000
    },
    common: { db: join(dir, 'db'), 'log-level': 'warn' },
    datafiles: { path: dir, cats: dir },
    stats: { dir: join(dir, `stats-${side}`), db: join(dir, `statsdb-${side}`) }
  }
  writeFileSync(join(dir, `${side}.yaml`), JSON.stringify(config, null, 1))
}
console.log(`setup: ${USERS} users each side (${DISTINCT} distinct schedules), 4,096 query names in ${dir}`)
