// Builds the data of bench/rpz/feed-dns.sh in DIR: the same N names as an RPZ feed (a zone file) and
// as a data file (`name category`), the dnsperf query file (half names under the table, answered by
// the filter; half names outside it, forwarded), and two DNS configs that differ only in where the
// names come from: `feed.yaml` (rpz-feeds, an empty category database) and `table.yaml` (the category
// database built from the data file by `filterd build-db`, the user's filter blocking that category).
// Usage: node dist/bench/rpz/feed-dns-setup.js DIR RECORDS UPSTREAM_PORT FEED_PORT TABLE_PORT
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CATEGORY } from '../../engine/categories/index.js'
import { Store } from '../../engine/store/index.js'

const [dir = '/tmp/filterd-rpz-dns', records = '3000000', upstream = '5390', feedPort = '5410', tablePort = '5411'] =
  process.argv.slice(2)
const N = Number(records)
const CAT = CATEGORY.MALWARE
const QUERIES = 200_000
const CONF = fileURLToPath(new URL('../../../conf', import.meta.url))

/** Name i: even ones exact (`host-…`), odd ones a wildcard's base (`*.d-…` in RPZ, the name in the data file). */
const nameOf = (i: number): string => (i % 2 === 0 ? `host-${i}.bench-${i % 977}.example` : `d-${i}.example`)

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

writeChunked(
  join(dir, 'feed.rpz.zone'),
  '$ORIGIN feed.rpz.\n$TTL 300\n@ SOA ns.feed.rpz. admin.feed.rpz. 1 86400 3600 864000 60\n@ NS localhost.\n',
  (i) => (i % 2 === 0 ? `${nameOf(i)} CNAME .\n` : `*.${nameOf(i)} CNAME .\n`),
  N
)
writeChunked(join(dir, 'vendor.txt'), '', (i) => `${nameOf(i)} ${CAT}\n`, N)
// Spread over the table; a hit under a wildcard asks a name below it.
const step = Math.max(1, Math.floor(N / (QUERIES / 2)))
writeChunked(
  join(dir, 'queries.txt'),
  '',
  (q) => {
    const i = (Math.floor(q / 2) * step + (q % 4 === 1 ? 1 : 0)) % N
    if (q % 2 === 1) return `miss-${q}.elsewhere${q % 101}.example A\n`
    return i % 2 === 0 ? `${nameOf(i)} A\n` : `www.${nameOf(i)} A\n`
  },
  QUERIES
)

for (const [name, port] of [
  ['feed', feedPort],
  ['table', tablePort]
] as const) {
  const db = join(dir, `db-${name}`)
  mkdirSync(db, { recursive: true })
  const store = Store.open(db)
  await store.write((w) => {
    w.putUser({ ...store.newUser('bench'), ip: ['127.0.0.1'], filter: [CAT] })
    w.claimAddresses('bench', ['127.0.0.1'])
  })
  await store.close()
  const config = {
    dnscache: { forward: [`127.0.0.1:${upstream}`] },
    proxy: {
      listen: [`127.0.0.1:${port}`],
      'blockpage-ip': ['192.0.2.1'],
      log: join(dir, `${name}.log`),
      pid: join(dir, `${name}.pid`),
      'log-level': 'warn',
      io: 'native',
      dispatch: 'inline',
      processes: 1
    },
    common: { db, 'log-level': 'warn' },
    datafiles: { path: dir, file: name === 'table' ? ['vendor.txt'] : [], cats: CONF },
    stats: { dir: join(dir, `stats-${name}`), db: join(dir, `statsdb-${name}`) },
    ...(name === 'feed'
      ? {
          'rpz-feeds': {
            'max-records': N + 10,
            'file-refresh': 86400,
            feeds: [{ zone: 'feed.rpz', file: join(dir, 'feed.rpz.zone') }]
          }
        }
      : {})
  }
  writeFileSync(join(dir, `${name}.yaml`), JSON.stringify(config, null, 1))
}
console.log(`setup: ${N} names as a feed and as a data file, ${QUERIES} queries (half under the table) in ${dir}`)
