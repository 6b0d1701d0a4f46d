// Data of the ISP-host benchmark (bench/dns/isp-host.sh), written straight into the store in bulk
// transactions (no API calls): SUBSCRIBERS users each with an IPv4 address (127.16.0.0 + i, every
// 127/8 address is local, so bench/dns/multisrc.c can send from each) and an IPv6 one (2001:db8::/32),
// one in ten of them with a scheduled rule of its own (distinct windows), filters over five categories;
// a 1M-name category table (every name in a blocked category, so dnsdist's rule lists them all); three
// list subscriptions with LIST_NAMES names together (global blacklist); an RPZ feed of FEED_RECORDS
// records as Knot's zone file (the dns role transfers it); the query names; configs for the dns role
// (PROCESSES processes), the api role and Knot.
// Usage: node dist/bench/dns/isp-host-setup.js DIR SUBSCRIBERS FEED_RECORDS LIST_NAMES PROCESSES PORTS
//   PORTS: upstream,feed-knot,dns,notify,api,metrics
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDbBuilder } from '../../engine/catdb/index.js'
import { applyEntries } from '../../engine/lists/apply.js'
import { normalizeIp } from '../../engine/net/ip.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import { Store, type UserRecord } from '../../engine/store/index.js'

const [
  dir = '/tmp/filterd-isp',
  subs = '1000000',
  feed = '5000000',
  listNames = '1000000',
  procs = '2',
  portList = ''
] = process.argv.slice(2)
const SUBSCRIBERS = Number(subs)
const FEED_RECORDS = Number(feed)
const LIST_NAMES = Number(listNames)
const [upstream, knotPort, dnsPort, notifyPort, apiPort, metricsPort] = portList.split(',').map(Number) as [
  number,
  number,
  number,
  number,
  number,
  number
]
const TABLE = 1_000_000
const CONF = fileURLToPath(new URL('../../../conf', import.meta.url))
const BATCH = 5000
const BLOCK_CATS = [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY, CATEGORY.MALWARE, CATEGORY.PHISHING, CATEGORY.ADVERTISING]
const ms = (t0: number): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`

/** Subscriber i's IPv4 address: 127.16.0.0 + i. */
const v4 = (i: number): string => `127.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`
const v6 = (i: number): string => normalizeIp(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`)!
const tableName = (i: number): string => `c${i}.cat${i % 50_000}.example`
const listName = (i: number): string => `l${i}.list${i % 997}.example`
/** Feed owner i: even ones exact, odd ones a wildcard's base (`*.f-…`). */
const feedName = (i: number): string => (i % 2 === 0 ? `h${i}.feed${i % 977}.example` : `f${i}.example`)
const pad = (n: number): string => String(n).padStart(2, '0')

/** Subscriber i's own rule (distinct windows up to 86,400 subscribers, then repeated): social networks closed twice a day. */
function rule(i: number): ScheduledRule {
  const days: ScheduledRule['windows'][number]['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
  const a = i % 60
  const b = Math.floor(i / 60) % 60
  const c = Math.floor(i / 3600) % 24
  return {
    name: 'own',
    timezone: 'UTC',
    windows: [
      { days, from: `${pad(c % 6)}:${pad(a)}`, to: `${pad(6 + (c % 6))}:${pad(b)}` },
      { days, from: `${pad(12 + Math.floor(c / 6))}:${pad(b)}`, to: `${pad(18 + Math.floor(c / 6))}:${pad(a)}` }
    ],
    filter: [CATEGORY.SOCIAL_NETWORKS]
  }
}

function writeChunked(file: string, head: string, line: (i: number) => string, count: number): void {
  const fd = openSync(file, 'w')
  writeSync(fd, head)
  for (let i = 0; i < count; i += 10_000) {
    let chunk = ''
    for (let j = i; j < Math.min(count, i + 10_000); j++) chunk += line(j)
    writeSync(fd, chunk)
  }
  closeSync(fd)
}

// Knot's journal (the IXFR it serves) lives in its database storage, which it does not create.
mkdirSync(join(dir, 'knot-feed', 'db'), { recursive: true })
const store = Store.open(join(dir, 'db'))
let t0 = Date.now()
const b = await CategoryDbBuilder.begin(store)
for (let i = 0; i < TABLE; i++) await b.put(tableName(i), false, [BLOCK_CATS[i % BLOCK_CATS.length]!])
await b.commit()
writeChunked(join(dir, 'blocklist.txt'), '', (i) => `${tableName(i)}\n`, TABLE)
console.log(`category table: ${TABLE} names in ${ms(t0)}`)

t0 = Date.now()
for (let start = 0; start < SUBSCRIBERS; start += BATCH) {
  await store.write((w) => {
    for (let i = start; i < Math.min(SUBSCRIBERS, start + BATCH); i++) {
      const name = `s${i}`
      const user: UserRecord = {
        ...store.newUser(name),
        filter: BLOCK_CATS.filter((_, k) => ((i >> k) & 1) === 1 || k === 0),
        ip: [v4(i), v6(i)]
      }
      if (i % 10 === 0) user.schedules = [rule(i / 10)]
      w.putUser(user)
      w.claimAddresses(name, user.ip)
    }
  })
}
console.log(`subscribers: ${SUBSCRIBERS} with ${2 * SUBSCRIBERS} addresses in ${ms(t0)}`)

t0 = Date.now()
for (let k = 0; k < 3; k++) {
  const names = new Set<string>()
  for (let i = k; i < LIST_NAMES; i += 3) names.add(listName(i))
  await applyEntries(store, `isp-list-${k}`, names, 'black')
}
console.log(`list subscriptions: 3 with ${LIST_NAMES} names in ${ms(t0)}`)
await store.close()

t0 = Date.now()
const feedHead = (serial: number): string =>
  `$ORIGIN feed.rpz.\n$TTL 300\n@ SOA ns.feed.rpz. admin.feed.rpz. ${serial} 86400 3600 864000 60\n@ NS localhost.\n`
const feedLine = (i: number): string => (i % 2 === 0 ? `${feedName(i)} CNAME .\n` : `*.${feedName(i)} CNAME .\n`)
writeChunked(join(dir, 'knot-feed', 'feed.rpz.zone'), feedHead(1), feedLine, FEED_RECORDS)
// The refresh: serial 2, 50,000 changes (25,000 owners out, 25,000 new ones in), for Knot to send as an IXFR.
const CHANGES = Math.min(50_000, FEED_RECORDS)
writeChunked(
  join(dir, 'feed-2.zone'),
  feedHead(2),
  (i) => (i < CHANGES / 2 ? `new${i}.changed.example CNAME .\n` : feedLine(i)),
  FEED_RECORDS
)
console.log(`feed zone: ${FEED_RECORDS} records (and serial 2: ${CHANGES} changes) in ${ms(t0)}`)

// 4,096 query names (multisrc's most): 1 in 8 from the category table, 1 in 16 from the lists, 1 in 16
// from the feed (under a wildcard or exact), the rest forwarded to the upstream.
const queries: string[] = []
for (let q = 0; q < 4096; q++) {
  const k = (q * 7919) % 1_000_000
  if (q % 8 === 0) queries.push(`${tableName(k % TABLE)} A`)
  else if (q % 16 === 1) queries.push(`${listName(k % Math.max(1, LIST_NAMES))} A`)
  else if (q % 16 === 3) {
    const i = (k % Math.max(1, FEED_RECORDS)) | 0
    queries.push(i % 2 === 0 ? `${feedName(i)} A` : `www.${feedName(i)} A`)
  } else queries.push(`www.site${q}.example A`)
}
writeFileSync(join(dir, 'queries.txt'), queries.join('\n') + '\n')

const config = {
  dnscache: { forward: [`127.0.0.1:${upstream}`] },
  proxy: {
    // IPv6 too: the warm-up queries from each subscriber's second address (bench/dns/multisrc.c's v6).
    listen: [`127.0.0.1:${dnsPort}`, `[::1]:${dnsPort}`],
    'blockpage-ip': ['192.0.2.1'],
    ttl: 60,
    log: join(dir, 'dns.log'),
    pid: join(dir, 'dns.pid'),
    'log-level': 'info',
    io: 'native',
    dispatch: 'inline',
    processes: Number(procs),
    'metrics-listen': `127.0.0.1:${metricsPort}`,
    // Every subscriber address (IPv4 and IPv6) and the probes' in each process.
    'policy-cache-addresses': 2 * SUBSCRIBERS + 1000
  },
  api: { listen: `127.0.0.1:${apiPort}`, log: join(dir, 'api.log'), pid: join(dir, 'api.pid') },
  lists: { refresh: false },
  common: { db: join(dir, 'db'), 'log-level': 'warn' },
  datafiles: { path: dir, cats: CONF },
  stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') },
  'rpz-feeds': {
    'notify-listen': `127.0.0.1:${notifyPort}`,
    'max-records': FEED_RECORDS + 10,
    'max-bytes': 4 * 1024 * 1024 * 1024,
    feeds: [{ zone: 'feed.rpz', primary: `127.0.0.1:${knotPort}` }]
  }
}
writeFileSync(join(dir, 'filterd.yaml'), JSON.stringify(config, null, 1))
const knotDir = join(dir, 'knot-feed')
writeFileSync(
  join(knotDir, 'knot.conf'),
  `server:\n    listen: 127.0.0.1@${knotPort}\n    rundir: "${knotDir}"\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n` +
    // Knot closes a transfer whose reader stalls for 500 ms (tcp-io-timeout); a loaded host's reader may.
    `    tcp-io-timeout: 60000\n    tcp-remote-io-timeout: 60000\n` +
    `control:\n    listen: "${join(knotDir, 'knot.sock')}"\ndatabase:\n    storage: "${join(knotDir, 'db')}"\n` +
    `acl:\n  - id: xfr\n    address: 127.0.0.0/8\n    action: transfer\n` +
    `log:\n  - target: stderr\n    any: info\n` +
    `zone:\n  - domain: feed.rpz\n    file: "${join(knotDir, 'feed.rpz.zone')}"\n    storage: "${knotDir}"\n    acl: xfr\n` +
    `    zonefile-load: difference\n    zonefile-sync: -1\n    journal-content: changes\n    semantic-checks: off\n`
)
console.log(`setup done in ${dir}`)
