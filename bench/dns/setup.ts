// Builds the DNS benchmark's data set in a directory: a 1M-name category table, 10,000 users with
// mixed policies, the dnsperf query file, dnsdist's equivalent block list and a filterd config.
// Usage: node dist/bench/dns/setup.js DIR UPSTREAM_PORT [TOP_DOMAINS_CSV_GZ]
import { createReadStream, existsSync, writeFileSync, createWriteStream } from 'node:fs'
import { createGunzip } from 'node:zlib'
import { createInterface } from 'node:readline'
import { join } from 'node:path'
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDbBuilder } from '../../engine/catdb/index.js'
import { Store } from '../../engine/store/index.js'

const dir = process.argv[2] ?? '/tmp/filterd-bench'
const upstreamPort = Number(process.argv[3] ?? 5390)
const topFile = process.argv[4] ?? '/work/shared/data/top-domains.csv.gz'
const TABLE_SIZE = 1_000_000
const USERS = 10_000
const blockCats = [CATEGORY.GAMBLING, CATEGORY.PORNOGRAPHY, CATEGORY.MALWARE, CATEGORY.PHISHING, CATEGORY.ADVERTISING]
const otherCats = [CATEGORY.SOCIAL_NETWORKS, CATEGORY.VIDEO_STREAMING, CATEGORY.SEARCH_ENGINES]

async function topNames(): Promise<string[]> {
  const names: string[] = []
  if (existsSync(topFile)) {
    const rl = createInterface({ input: createReadStream(topFile).pipe(createGunzip()) })
    for await (const line of rl) {
      const name = line.split(',')[1]?.trim().toLowerCase()
      if (name !== undefined && name !== 'domain' && /^[a-z0-9._-]+$/.test(name)) names.push(name)
    }
  } else {
    for (let i = 0; i < 100_000; i++) names.push(`host${i}.site${i % 9973}.example`)
  }
  return names
}

const names = await topNames()
const store = Store.open(join(dir, 'db'))
const builder = await CategoryDbBuilder.begin(store)
const blocklist = createWriteStream(join(dir, 'blocklist.txt'))
const categorized = new Set<string>()
// About a quarter of the popular names get a category; half of those are in the test user's filter.
for (let i = 0; i < names.length; i += 4) {
  const name = names[i]!
  if (categorized.has(name)) continue
  categorized.add(name)
  const blocked = (i >> 2) % 2 === 0
  const cat = blocked ? blockCats[i % blockCats.length]! : otherCats[i % otherCats.length]!
  await builder.put(name, false, [cat])
  if (blocked) blocklist.write(name + '\n')
}
// Synthetic names up to 1M entries (blocked categories, so dnsdist's list is as large).
for (let i = 0; categorized.size < TABLE_SIZE; i++) {
  const name = `s${i}.synth${i % 50_000}.bench-filler.net`
  categorized.add(name)
  await builder.put(name, false, [blockCats[i % blockCats.length]!])
  blocklist.write(name + '\n')
}
await builder.commit()
await new Promise<void>((resolve) => blocklist.end(resolve))

// 10,000 users on 10.x.y.1 with mixed filters and lists; 127.0.0.1 (dnsperf) is user `bench`.
await store.write((w) => {
  for (let u = 0; u < USERS; u++) {
    const name = `user${u}`
    const ip = `10.${(u >> 8) & 255}.${u & 255}.1`
    const filter = blockCats.filter((_, k) => ((u >> k) & 1) === 1)
    w.putUser({
      ...store.newUser(name),
      ip: [ip],
      filter,
      safesearch: u % 3 === 0 ? 'on' : 'off',
      safeyoutube: u % 5 === 0 ? 'on' : 'off'
    })
    w.claimAddresses(name, [ip])
    if (u % 10 === 0) w.putList(name, 'black', [`blocked${u}.example`])
    if (u % 7 === 0) w.putList(name, 'white', [`allowed${u}.example`])
  }
  w.putUser({ ...store.newUser('bench'), ip: ['127.0.0.1'], filter: blockCats })
  w.claimAddresses('bench', ['127.0.0.1'])
  w.putList('bench', 'black', ['blocked-by-user.example'])
  w.putList(null, 'black', ['blocked-globally.example'])
})
await store.close()

// dnsperf input: the popular names in rank order, as A queries (a quarter are categorized, an eighth blocked).
writeFileSync(join(dir, 'queries.txt'), names.map((n) => `${n} A`).join('\n') + '\n')

for (const [file, listen, extra] of [
  ['inline-p1.yaml', 5393, { io: 'dgram', dispatch: 'inline', processes: 1 }],
  ['pool-p1.yaml', 5394, { io: 'dgram', dispatch: 'pool', processes: 1, workers: 1, 'batch-size': 64 }],
  ['inline-p2.yaml', 5395, { io: 'dgram', dispatch: 'inline', processes: 2 }],
  ['native-inline-p1.yaml', 5396, { io: 'native', dispatch: 'inline', processes: 1 }],
  ['native-pool-p1.yaml', 5397, { io: 'native', dispatch: 'pool', processes: 1, workers: 1, 'batch-size': 64 }],
  ['native-inline-p2.yaml', 5398, { io: 'native', dispatch: 'inline', processes: 2 }],
  // The same two with dnstap on, to the fstrm_capture run.sh starts on this socket (written to /dev/null).
  [
    'native-inline-p1-dnstap.yaml',
    5400,
    { io: 'native', dispatch: 'inline', processes: 1, dnstap: `unix:${join(dir, 'dnstap.sock')}` }
  ],
  [
    'native-inline-p2-dnstap.yaml',
    5401,
    { io: 'native', dispatch: 'inline', processes: 2, dnstap: `unix:${join(dir, 'dnstap.sock')}` }
  ]
] as const) {
  const config = {
    dnscache: { forward: [`127.0.0.1:${upstreamPort}`] },
    proxy: {
      listen: [`127.0.0.1:${listen}`],
      'blockpage-ip': ['192.0.2.1'],
      ttl: 60,
      log: join(dir, `${file}.log`),
      pid: join(dir, `${file}.pid`),
      'log-level': 'warn',
      ...extra
    },
    common: { db: join(dir, 'db'), 'log-level': 'warn' },
    datafiles: { path: dir, cats: dir },
    // The dnstap servers publish their metrics (dnstap drops) apart, for run.sh to read.
    stats: { dir: join(dir, file.includes('dnstap') ? `stats-${file}` : 'stats'), db: join(dir, 'statsdb') }
  }
  writeFileSync(join(dir, file), JSON.stringify(config, null, 1))
}
console.log(`setup: ${categorized.size} category entries, ${USERS + 1} users, ${names.length} query names in ${dir}`)
