// RPZ in: zone files, the feed's triggers and actions, IXFR applied all or nothing, and transfers
// from Knot DNS (a primary no one here wrote) with TSIG.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseZoneFile } from '../rpz-zones/zonefile.js'
import { FeedZone, matchFeeds } from './feed.js'
import { transferZone } from './transfer-in.js'
import { FeedFollower, listenForNotify } from './follower.js'
import { tsigKey } from '../rpz-zones/tsig.js'
import { KNOT_KEY, startKnot } from '../testing/knot.js'
import { tempDir } from '../testing/temp.js'
import { releasedPort } from '../testing/ports.js'
import { until } from '../testing/wait.js'
import { frame } from '../wire/tcp-frame.js'
import { packRecords } from '../rpz-zones/transfer-out.js'
import { CLASS_IN, TYPE_AXFR } from '../rpz-zones/message.js'
import { RpzZone, cnameAction } from '../rpz-zones/zone.js'

function feedText(serial: number, extra = ''): string {
  return `$ORIGIN feed.rpz.
$TTL 300
@ IN SOA ns.feed.rpz. admin.feed.rpz. ( ${serial} 60 30 86400
     60 ) ; several lines
  IN NS localhost.
bad.example      CNAME .
*.bad.example    CNAME .
nodata.example   CNAME *.
pass.bad.example CNAME rpz-passthru.
drop.example     CNAME rpz-drop.
tcp.example      CNAME rpz-tcp-only.
local.example    A 192.0.2.1
local.example    AAAA 2001:db8::1
24.0.2.0.192.rpz-client-ip CNAME .
32.5.2.0.192.rpz-client-ip CNAME rpz-passthru.
ns.evil.rpz-nsdname CNAME .
32.1.0.0.10.rpz-nsip CNAME .
32.9.9.0.198.rpz-ip CNAME .
${extra}`
}

test('a zone file becomes a feed: QNAME and CLIENT-IP triggers enforced, the others counted', () => {
  const feed = FeedZone.fromRecords('feed.rpz', parseZoneFile(feedText(7), 'feed.rpz'))
  assert.equal(feed.serial, 7)
  assert.deepEqual(feed.timers, { refresh: 60, retry: 30, expire: 86400 })
  assert.deepEqual(feed.counts, { qname: 7, clientIp: 2, nsdname: 1, nsip: 1, responseIp: 1 })
  assert.equal(feed.match('bad.example')?.action.kind, 'nxdomain')
  assert.equal(feed.match('www.bad.example')?.trigger, '*.bad.example')
  assert.equal(feed.match('pass.bad.example')?.action.kind, 'passthru', 'exact beats wildcard')
  assert.equal(feed.match('nodata.example')?.action.kind, 'nodata')
  assert.equal(feed.match('drop.example')?.action.kind, 'drop')
  assert.equal(feed.match('tcp.example')?.action.kind, 'tcp-only')
  assert.deepEqual(feed.match('local.example')?.action, {
    kind: 'local',
    records: [
      [1, '192.0.2.1'],
      [28, '2001:db8::1']
    ]
  })
  assert.equal(feed.match('fine.example'), undefined)
  assert.equal(feed.match('fine.example', '192.0.2.9')?.action.kind, 'nxdomain', 'CLIENT-IP /24')
  assert.equal(feed.match('bad.example', '192.0.2.5')?.action.kind, 'passthru', 'the longer prefix, before QNAME')
})

test('several feeds: the first zone that matches wins', () => {
  const a = FeedZone.fromRecords(
    'a.rpz',
    parseZoneFile('@ SOA a. b. 1 1 1 1 1\nx.example CNAME rpz-passthru.\n', 'a.rpz')
  )
  const b = FeedZone.fromRecords(
    'b.rpz',
    parseZoneFile('@ SOA a. b. 1 1 1 1 1\nx.example CNAME .\ny.example CNAME .\n', 'b.rpz')
  )
  assert.deepEqual(matchFeeds([a, b], 'x.example')?.zone, 'a.rpz')
  assert.deepEqual(matchFeeds([a, b], 'y.example')?.action.kind, 'nxdomain')
})

test('a malformed zone file is refused whole, naming its line', () => {
  assert.throws(() => parseZoneFile('@ SOA a. b. 1 1 1 1 1\nx.example BOGUS .\n', 'f.rpz'), /line 2/)
  assert.throws(() => parseZoneFile('@ SOA a. b. ( 1 1 1 1 1\n', 'f.rpz'), /unbalanced/)
  assert.throws(() => FeedZone.fromRecords('f.rpz', parseZoneFile('x CNAME .\n', 'f.rpz')), /no SOA/)
})

test('IXFR steps apply all or nothing: a gap or a deletion of an absent record leaves the feed as it was', () => {
  const feed = FeedZone.fromRecords('feed.rpz', parseZoneFile(feedText(7), 'feed.rpz'))
  const rec = (name: string, data: string) => ({ name: `${name}.feed.rpz`, type: 5, ttl: 300, data })
  assert.throws(() => feed.applySteps([{ from: 6, to: 8, deleted: [], added: [rec('new.example', '')] }]), /gap/)
  assert.throws(
    () =>
      feed.applySteps([
        { from: 7, to: 8, deleted: [], added: [rec('new.example', '')] },
        { from: 8, to: 9, deleted: [rec('absent.example', '')], added: [] }
      ]),
    /does not hold/
  )
  assert.equal(feed.serial, 7)
  assert.equal(feed.match('new.example'), undefined, 'the first step of a failed IXFR is not applied')
  feed.applySteps([{ from: 7, to: 8, deleted: [rec('bad.example', '')], added: [rec('new.example', '')] }])
  assert.equal(feed.serial, 8)
  assert.equal(feed.match('new.example')?.action.kind, 'nxdomain')
  assert.equal(feed.match('bad.example'), undefined)
})

test('IXFR steps that move an owner between the packed and the record forms keep every other trigger', () => {
  const feed = FeedZone.fromRecords('feed.rpz', parseZoneFile(feedText(7), 'feed.rpz'))
  const rec = (name: string, type: number, data: string) => ({ name: `${name}.feed.rpz`, type, ttl: 300, data })
  const steps = [
    // The wildcard gains a second record: from a packed trigger to local data.
    { from: 7, to: 8, deleted: [], added: [rec('*.bad.example', 1, '192.0.2.7')] },
    // Its CNAME goes: local data alone.
    { from: 8, to: 9, deleted: [rec('*.bad.example', 5, '')], added: [rec('later.example', 5, '')] },
    // Back to one special CNAME: packed again.
    { from: 9, to: 10, deleted: [rec('*.bad.example', 1, '192.0.2.7')], added: [rec('*.bad.example', 5, '*')] },
    // A neighbour under it changes, the exact name beside it goes and comes back.
    { from: 10, to: 11, deleted: [rec('bad.example', 5, '')], added: [rec('x.bad.example', 5, 'rpz-drop')] },
    { from: 11, to: 12, deleted: [], added: [rec('bad.example', 5, '')] }
  ]
  const wildcard = ['nxdomain', 'local', 'local', 'nodata', 'nodata', 'nodata']
  const records = [14, 15, 15, 15, 15, 16]
  for (let i = 0; i <= steps.length; i++) {
    if (i > 0) feed.applySteps([steps[i - 1]!])
    assert.equal(feed.match('www.bad.example')?.action.kind, wildcard[i], `the wildcard after step ${i}`)
    assert.equal(feed.match('www.bad.example')?.trigger, '*.bad.example')
    assert.equal(feed.match('pass.bad.example')?.action.kind, 'passthru', `the exact name under it after step ${i}`)
    assert.equal(feed.recordCount, records[i], `records after step ${i}`)
  }
  assert.deepEqual(feed.match('www.bad.example')?.action, { kind: 'nodata' })
  assert.equal(feed.match('x.bad.example')?.action.kind, 'drop')
  assert.equal(feed.match('bad.example')?.action.kind, 'nxdomain')
  assert.equal(feed.match('later.example')?.action.kind, 'nxdomain')
  assert.equal(feed.counts.qname, 9)
  assert.equal(feed.serial, 12)
})

test('single records other than the special CNAMEs are packed by value, shared, and read back for an IXFR', () => {
  const garden = Array.from({ length: 50 }, (_, i) => `g${i}.example CNAME garden.example.\n`).join('')
  const feed = FeedZone.fromRecords(
    'feed.rpz',
    parseZoneFile(
      feedText(7, garden + 'addr.example A 192.0.2.9\n*.wild.example CNAME *.garden.example.\n'),
      'feed.rpz'
    )
  )
  assert.deepEqual(feed.match('g3.example')?.action, { kind: 'local', records: [[5, 'garden.example']] })
  assert.equal(feed.match('g3.example')?.action, feed.match('g49.example')?.action, 'one action object for the value')
  assert.deepEqual(feed.match('addr.example')?.action, { kind: 'local', records: [[1, '192.0.2.9']] })
  assert.deepEqual(feed.match('a.wild.example')?.action, { kind: 'local', records: [[5, '*.garden.example']] })
  assert.equal(feed.recordCount, 14 + 52)
  const rec = (name: string, type: number, data: string) => ({ name: `${name}.feed.rpz`, type, ttl: 300, data })
  assert.throws(
    () => feed.applySteps([{ from: 7, to: 8, deleted: [rec('g3.example', 5, 'other.example')], added: [] }]),
    /does not hold/
  )
  feed.applySteps([
    { from: 7, to: 8, deleted: [rec('g3.example', 5, 'garden.example')], added: [rec('g3.example', 1, '192.0.2.9')] }
  ])
  assert.deepEqual(feed.match('g3.example')?.action, { kind: 'local', records: [[1, '192.0.2.9']] })
  assert.deepEqual(feed.match('g4.example')?.action, { kind: 'local', records: [[5, 'garden.example']] })
  assert.equal(feed.match('www.bad.example')?.action.kind, 'nxdomain')
})

test('a transfer cut midway rejects and returns nothing', async (t: TestContext) => {
  const zone = new RpzZone(
    { origin: 'cut.rpz', soa: { mname: 'a', rname: 'b', refresh: 1, retry: 1, expire: 1, minimum: 1 }, ttl: 1 },
    5,
    new Map(Array.from({ length: 3000 }, (_, i) => [`n${i}.example`, cnameAction('')] as [string, string]))
  )
  const server = createServer((socket) => {
    socket.once('data', (q) => {
      const id = q.readUInt16BE(2)
      const msgs = [
        ...packRecords(
          id,
          { name: 'cut.rpz', type: TYPE_AXFR, class: CLASS_IN },
          (function* () {
            yield zone.soaRecord()
            for (const [o, a] of zone.entries) yield* zone.records(o, a)
          })()
        )
      ]
      socket.end(Buffer.concat(msgs.map((m) => frame(m))))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => server.close())
  const port = (server.address() as { port: number }).port
  await assert.rejects(
    transferZone({ host: '127.0.0.1', port, zone: 'cut.rpz' }),
    /closed before the transfer was complete/
  )
})

const KEY = KNOT_KEY

test('Knot DNS as primary: AXFR with TSIG, a wrong key refused, then an update by IXFR', async (t: TestContext) => {
  const port = await releasedPort()
  const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), port, 'feed.rpz', feedText(10))

  const first = await transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: KEY })
  assert.equal(first.kind, 'axfr')
  const feed = FeedZone.fromRecords('feed.rpz', first.kind === 'axfr' ? first.records : [])
  assert.equal(feed.serial, 10)
  assert.equal(feed.match('www.bad.example')?.action.kind, 'nxdomain')

  const wrong = tsigKey('feed-key', 'hmac-sha256', Buffer.alloc(32, 1).toString('base64'))
  await assert.rejects(transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: wrong }), /TSIG|rcode 9|closed/)
  await assert.rejects(transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz' }), /rcode|closed/)

  await knot.update(feedText(11, 'later.example CNAME .\n'))
  await until(
    'knot at serial 11',
    async () => {
      const r = await transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: KEY, serial: 11 }).catch(
        () => undefined
      )
      return r?.kind === 'current' && r.serial === 11
    },
    30_000,
    100
  )
  const update = await transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: KEY, serial: feed.serial })
  assert.equal(update.kind, 'ixfr', 'an incremental transfer')
  if (update.kind === 'ixfr') feed.applySteps(update.steps)
  assert.equal(feed.serial, 11)
  assert.equal(feed.match('later.example')?.action.kind, 'nxdomain')
  assert.equal(feed.match('www.bad.example')?.action.kind, 'nxdomain', 'the rest kept')
})

/** What a feed says for each probe name: the same for an IXFR-patched feed and a whole load. */
function verdicts(feed: FeedZone, names: readonly string[]): string[] {
  return names.map((n) => {
    const m = feed.match(n)
    return m === undefined ? `${n}: -` : `${n}: ${m.trigger} ${JSON.stringify(m.action)}`
  })
}

test('IXFRs from Knot one after another: the untouched wildcard matches after every one, and the feed equals a whole load', async (t: TestContext) => {
  const port = await releasedPort()
  const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), port, 'feed.rpz', feedText(30))
  const axfr = async (): Promise<FeedZone> => {
    const whole = await transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: KEY })
    return FeedZone.fromRecords('feed.rpz', whole.kind === 'axfr' ? whole.records : [])
  }
  const feed = await axfr()
  // 3,000 names: an IXFR of several messages.
  const names = Array.from({ length: 3000 }, (_, i) => `n${i}.many.example CNAME .\n`)
  const many = names.join('')
  const versions = [
    'later.example CNAME .\n',
    'later.example CNAME .\nx.bad.example CNAME rpz-drop.\n*.other.example CNAME *.\n',
    'x.bad.example CNAME rpz-drop.\n*.other.example CNAME *.\n' + many,
    'x.bad.example A 192.0.2.8\n' + names.slice(1500).join(''),
    ''
  ]
  const probes = ['www.bad.example', 'a.b.bad.example', 'bad.example', 'pass.bad.example', 'x.bad.example']
  probes.push('later.example', 'www.other.example', 'n7.many.example', 'n2999.many.example', 'fine.example')
  for (const [i, extra] of versions.entries()) {
    const serial = 31 + i
    await knot.update(feedText(serial, extra))
    await until(
      `knot at serial ${serial}`,
      async () => {
        const r = await transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: KEY, serial }).catch(
          () => undefined
        )
        // Knot still at an older serial answers its own SOA alone too: the serial tells.
        return r?.kind === 'current' && r.serial === serial
      },
      30_000,
      100
    )
    const update = await transferZone({ host: '127.0.0.1', port, zone: 'feed.rpz', key: KEY, serial: feed.serial })
    assert.equal(update.kind, 'ixfr', `serial ${serial}: an incremental transfer`)
    if (update.kind === 'ixfr') feed.applySteps(update.steps)
    assert.equal(feed.serial, serial)
    assert.equal(feed.match('www.bad.example')?.trigger, '*.bad.example', `serial ${serial}: the wildcard`)
    assert.equal(feed.match('www.bad.example')?.action.kind, 'nxdomain')
    const whole = await axfr()
    assert.deepEqual(verdicts(feed, probes), verdicts(whole, probes), `serial ${serial}: as a whole load`)
    assert.deepEqual([feed.recordCount, feed.counts], [whole.recordCount, whole.counts])
  }
})

test('a follower takes a feed from Knot with TSIG and follows its NOTIFY by IXFR', async (t: TestContext) => {
  const port = await releasedPort()
  const notifyPort = await releasedPort()
  const knot = await startKnot(t, tempDir(t, 'filterd-knot-'), port, 'feed.rpz', feedText(20), notifyPort)
  const follower = new FeedFollower({ zone: 'feed.rpz', primary: { host: '127.0.0.1', port }, key: KEY })
  t.after(() => follower.close())
  await follower.start()
  assert.equal(follower.status.state, 'ok')
  assert.equal(follower.feed?.match('bad.example')?.action.kind, 'nxdomain')
  const notify = await listenForNotify('127.0.0.1', notifyPort, [follower], new Map([['feed.rpz', '127.0.0.1']]))
  t.after(() => notify.close())

  await knot.update(feedText(21, 'later.example CNAME .\n'))
  await until(
    'the NOTIFY and IXFR reach the feed',
    () => follower.feed?.match('later.example') !== undefined,
    30_000,
    20
  )
  assert.equal(follower.status.serial, 21)
})

test('a follower keeps the previous feed enforced when the next load fails, and says why', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-feed-')
  const file = join(dir, 'feed.rpz.zone')
  writeFileSync(file, feedText(3))
  const follower = new FeedFollower({ zone: 'feed.rpz', file })
  t.after(() => follower.close())
  const seen: Array<string | undefined> = []
  follower.onUpdate = (_s, err) => seen.push(err?.message)
  await follower.start()
  writeFileSync(file, feedText(4, 'broken.example BOGUS x\n'))
  await follower.refresh()
  assert.equal(follower.status.state, 'failing')
  assert.match(follower.status.lastError ?? '', /line \d+/)
  assert.equal(follower.status.serial, 3)
  assert.equal(follower.feed?.match('bad.example')?.action.kind, 'nxdomain', 'the previous feed is still enforced')
  assert.deepEqual(seen.length, 2)

  const knotless = new FeedFollower({
    zone: 'feed.rpz',
    primary: { host: '127.0.0.1', port: await releasedPort() },
    key: KEY
  })
  t.after(() => knotless.close())
  await knotless.start()
  assert.equal(knotless.status.state, 'failing')
  assert.equal(knotless.feed, undefined)
})
