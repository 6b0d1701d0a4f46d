// RPZ in, bad input against a primary we script: a transfer cut midway, an IXFR with a gap, a zone
// over the size limits. Each leaves the feed enforced as it was, with the error in its status (what
// /metrics and the log show), and a later good transfer is taken.
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { frame } from '../wire/tcp-frame.js'
import { packRecords, axfrRecords, ixfrRecords, transferRecords } from '../rpz-zones/transfer-out.js'
import { parseMessage, TYPE_IXFR, TYPE_SOA } from '../rpz-zones/message.js'
import { readSoa } from '../rpz-zones/rdata.js'
import { RpzZone, cnameAction, type ZoneDiff } from '../rpz-zones/zone.js'
import { FeedFollower } from './follower.js'
import { RpzFeeds } from './feed-set.js'
import { FeedZone } from './feed.js'
import { parseZoneFile } from '../rpz-zones/zonefile.js'
import { tempDir } from '../testing/temp.js'

type Mode = 'axfr' | 'cut' | 'gap' | 'journal'

function zoneAt(serial: number, names: readonly string[]): RpzZone {
  return new RpzZone(
    {
      origin: 'feed.rpz',
      soa: { mname: 'ns', rname: 'admin', refresh: 3600, retry: 600, expire: 86400, minimum: 60 },
      ttl: 60
    },
    serial,
    new Map(names.map((n) => [n, cnameAction('')] as [string, string]))
  )
}

/** A primary that answers each transfer as `state.mode` says, from `state.zone`. */
async function scriptedPrimary(t: TestContext, state: { mode: Mode; zone: RpzZone; asked: string[] }): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy())
    socket.once('data', (q) => {
      const m = parseMessage(q.subarray(2))
      const question = m.question[0]!
      state.asked.push(question.type === TYPE_IXFR ? 'ixfr' : 'axfr')
      const zone = state.zone
      let records
      const asked = m.authority.find((r) => r.type === TYPE_SOA)
      if (state.mode === 'journal')
        // As a primary with a journal answers: the changes since the serial asked, condensed (RFC 1995 4).
        records = transferRecords(
          zone,
          question.type,
          asked === undefined ? undefined : readSoa(m.raw, asked).serial
        ).records
      else if (state.mode === 'gap' && question.type === TYPE_IXFR) {
        const diff: ZoneDiff = new Map([['new.example', [undefined, cnameAction('')]]])
        records = ixfrRecords(zone, zone.serial - 5, diff) // starts at a serial the follower never had
      } else records = axfrRecords(zone)
      const msgs = [...packRecords(m.header.id, question, records, 1024)].map((b) => frame(b))
      if (state.mode === 'cut') socket.end(Buffer.concat(msgs.slice(0, Math.max(1, msgs.length >> 1))))
      else socket.end(Buffer.concat(msgs))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => server.close())
  return (server.address() as { port: number }).port
}

const NAMES = Array.from({ length: 400 }, (_, i) => `n${i}.example`)

test('a cut transfer and an IXFR with a gap leave the feed as it was; the next good transfer is taken whole', async (t: TestContext) => {
  const state = { mode: 'axfr' as Mode, zone: zoneAt(1, NAMES), asked: [] as string[] }
  const port = await scriptedPrimary(t, state)
  const follower = new FeedFollower({ zone: 'feed.rpz', primary: { host: '127.0.0.1', port } })
  t.after(() => follower.close())
  const errors: string[] = []
  follower.onUpdate = (_s, err) => {
    if (err !== undefined) errors.push(err.message)
  }
  await follower.start()
  assert.equal(follower.status.serial, 1)
  assert.equal(follower.feed?.match('n7.example')?.action.kind, 'nxdomain')

  state.zone = zoneAt(2, ['other.example', ...NAMES.slice(100)]) // several messages, so one can be cut
  state.mode = 'gap'
  await follower.refresh()
  assert.equal(follower.status.state, 'failing')
  assert.match(errors.at(-1) ?? '', /IXFR gap/)
  assert.equal(follower.status.serial, 1)
  assert.equal(follower.feed?.match('new.example'), undefined, 'nothing of the IXFR applied')
  assert.equal(follower.feed?.match('n399.example')?.action.kind, 'nxdomain')

  state.mode = 'cut'
  await follower.refresh()
  assert.match(errors.at(-1) ?? '', /closed before the transfer was complete/)
  assert.equal(follower.status.errors, 2)
  assert.equal(follower.status.serial, 1)
  assert.equal(follower.feed?.match('n7.example')?.action.kind, 'nxdomain', 'the previous feed enforced')
  assert.equal(follower.feed?.match('other.example'), undefined, 'nothing of the cut transfer')

  state.mode = 'axfr'
  await follower.refresh()
  assert.deepEqual(state.asked, ['axfr', 'ixfr', 'axfr', 'axfr'], 'after a failed IXFR, whole zones until one is taken')
  assert.equal(follower.status.state, 'ok')
  assert.equal(follower.status.serial, 2)
  assert.equal(follower.feed?.match('other.example')?.action.kind, 'nxdomain')
  assert.equal(follower.feed?.match('n7.example'), undefined)
})

test('max-records bounds the zone an IXFR leaves, not its changes; after a refused IXFR the next good serial is enforced at the next refresh', async (t: TestContext) => {
  const names = (prefix: string, n: number): Map<string, string> =>
    new Map(Array.from({ length: n }, (_, i) => [`${prefix}${i}.example`, cnameAction('')] as [string, string]))
  const state = { mode: 'journal' as Mode, zone: zoneAt(1, []), asked: [] as string[] }
  state.zone.update(10, names('a', 40))
  const port = await scriptedPrimary(t, state)
  const follower = new FeedFollower({ zone: 'feed.rpz', primary: { host: '127.0.0.1', port }, maxRecords: 50 })
  t.after(() => follower.close())
  await follower.start()
  assert.equal(follower.status.serial, 10)

  // 40 deletions and 40 additions: 80 changes, a zone of 40 records.
  state.zone.update(11, names('b', 40))
  await follower.refresh()
  assert.equal(follower.status.lastError, null)
  assert.deepEqual(
    [state.asked.at(-1), follower.status.serial, follower.status.records],
    ['ixfr', 11, 41],
    '40 triggers and the apex NS'
  )
  assert.equal(follower.feed?.match('b7.example')?.action.kind, 'nxdomain')
  assert.equal(follower.feed?.match('a7.example'), undefined)

  // A zone of 60 records: refused, serial 11 stays enforced.
  state.zone.update(12, names('c', 60))
  await follower.refresh()
  assert.match(follower.status.lastError ?? '', /more than 50 \(rpz-feeds.max-records\)/)
  assert.deepEqual([state.asked.at(-1), follower.status.state, follower.status.serial], ['ixfr', 'failing', 11])
  assert.equal(follower.feed?.match('b7.example')?.action.kind, 'nxdomain')

  // Back to a good size: one refresh enforces it, by a whole transfer after the refused IXFR.
  state.zone.update(13, names('d', 45))
  await follower.refresh()
  assert.equal(follower.status.lastError, null)
  assert.deepEqual([state.asked.at(-1), follower.status.state, follower.status.serial], ['axfr', 'ok', 13])
  assert.equal(follower.feed?.match('d44.example')?.action.kind, 'nxdomain')
  assert.equal(follower.feed?.match('b7.example'), undefined)
  assert.equal(follower.feed?.recordCount, 46)
})

test('a transfer or a zone file over rpz-feeds.max-records or max-bytes is refused whole', async (t: TestContext) => {
  const state = { mode: 'axfr' as Mode, zone: zoneAt(1, NAMES.slice(0, 10)), asked: [] as string[] }
  const port = await scriptedPrimary(t, state)
  const limits = { maxRecords: 50, maxBytes: 1 << 20, fileRefresh: 300, timeoutMs: 5000 }
  const dir = tempDir(t, 'filterd-feed-')
  const file = join(dir, 'file.rpz.zone')
  writeFileSync(file, '$ORIGIN file.rpz.\n@ 60 SOA ns. admin. 1 60 60 600 60\nkept.example CNAME .\n')
  const feeds = new RpzFeeds(
    [
      { zone: 'feed.rpz', primary: { host: '127.0.0.1', port }, action: 'zone', category: null },
      { zone: 'file.rpz', file, action: 'zone', category: null }
    ],
    limits
  )
  t.after(() => feeds.close())
  await feeds.start()
  assert.equal(feeds.match('n3.example', '')?.zone, 'feed.rpz')
  assert.equal(feeds.match('kept.example', '')?.zone, 'file.rpz')

  state.zone = zoneAt(2, NAMES) // 400 triggers: over 50 records
  const [transferred, fromFile] = feeds.followers
  await transferred!.refresh()
  assert.match(transferred!.status.lastError ?? '', /more than 50 records \(rpz-feeds.max-records\)/)
  assert.equal(transferred!.status.serial, 1)
  assert.equal(feeds.match('n3.example', '')?.zone, 'feed.rpz', 'the previous copy enforced')
  assert.equal(feeds.match('n300.example', ''), undefined)

  writeFileSync(
    file,
    '$ORIGIN file.rpz.\n@ 60 SOA ns. admin. 2 60 60 600 60\n' + NAMES.map((n) => `${n} CNAME .\n`).join('')
  )
  await fromFile!.refresh()
  assert.match(fromFile!.status.lastError ?? '', /more than 50 records/)
  assert.equal(feeds.match('kept.example', '')?.zone, 'file.rpz')
  const report = feeds.reports().find((r) => r.zone === 'file.rpz')
  assert.deepEqual([report?.state, report?.errors, report?.serial, report?.records], ['failing', 1, 1, 1])

  const tiny = new FeedFollower({ zone: 'feed.rpz', primary: { host: '127.0.0.1', port }, maxBytes: 2048 })
  t.after(() => tiny.close())
  await tiny.start()
  assert.match(tiny.status.lastError ?? '', /larger than 2048 bytes \(rpz-feeds.max-bytes\)/)
  assert.equal(tiny.feed, undefined)
})

test('an IXFR updates only the changed triggers, to the same feed a whole load of the new zone gives', () => {
  const head = '$ORIGIN f.rpz.\n@ 60 SOA ns. admin. 1 60 60 600 60\n@ NS localhost.\n'
  const body = 'a.example CNAME .\n*.b.example CNAME *.\nc.example A 192.0.2.1\nns.x.rpz-nsdname CNAME .\n'
  const feed = FeedZone.fromRecords('f.rpz', parseZoneFile(head + body, 'f.rpz'))
  const rec = (name: string, type: number, data: string) => ({ name: `${name}.f.rpz`, type, ttl: 60, data })
  feed.applySteps([
    {
      from: 1,
      to: 2,
      deleted: [rec('a.example', 5, ''), rec('ns.x.rpz-nsdname', 5, ''), rec('c.example', 1, '192.0.2.1')],
      added: [rec('*', 5, 'rpz-passthru'), rec('c.example', 5, 'rpz-drop'), rec('32.1.0.0.10.rpz-nsip', 5, '')]
    }
  ])
  const whole = FeedZone.fromRecords(
    'f.rpz',
    parseZoneFile(
      head.replace(' 1 60', ' 2 60') +
        '*.b.example CNAME *.\nc.example CNAME rpz-drop.\n* CNAME rpz-passthru.\n32.1.0.0.10.rpz-nsip CNAME .\n',
      'f.rpz'
    )
  )
  assert.deepEqual(feed.counts, whole.counts)
  assert.equal(feed.recordCount, whole.recordCount)
  for (const name of ['a.example', 'x.b.example', 'c.example', 'other.example'])
    assert.deepEqual(feed.match(name), whole.match(name), name)
})
