// The live query log (GET /live/queries, Server-Sent Events) following the DNS role's current CSV files:
// backlog (in time order across processes and files), filters, rotation, limits, and a client that stops reading (loses rows, is told, costs bounded memory).
import { test, type TestContext } from 'node:test'
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { CSV_HEADER, decodeRow, formatRow, parseRecords, type StatsRow } from '../engine/querylog/index.js'
import { fileStamp } from '../engine/querylog/files.js'
import { Backlog } from './live-backlog.js'
import { liveRow } from './live-log.js'
import { call, errorOf, startApi, tempDir, type StartedApi } from './testing/fixtures.js'

// A real collection before each heap reading, so the heap counts what is kept, not garbage not yet collected.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

interface LiveEvent {
  event: string
  data: any
}

/** Reads an SSE stream with fetch, collecting events. */
async function openStream(
  t: TestContext,
  url: string
): Promise<{
  events: LiveEvent[]
  until: (n: number, pred?: (e: LiveEvent) => boolean) => Promise<LiveEvent[]>
  close: () => void
}> {
  const ac = new AbortController()
  const res = await fetch(url, { signal: ac.signal })
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  t.assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/)
  const events: LiveEvent[] = []
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let buf = ''
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buf += dec.decode(value, { stream: true })
        // Walk the buffer by index and cut it once: slicing per event would copy a large chunk per event.
        let from = 0
        let i
        while ((i = buf.indexOf('\n\n', from)) >= 0) {
          const block = buf.slice(from, i)
          from = i + 2
          let event = 'message'
          let data: string | undefined
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7)
            else if (line.startsWith('data: ')) data = line.slice(6)
          }
          if (data !== undefined) events.push({ event, data: JSON.parse(data) })
        }
        buf = buf.slice(from)
      }
    } catch {
      /* aborted */
    }
  })()
  const close = (): void => {
    ac.abort()
  }
  t.after(async () => {
    close()
    await pump
  })
  const until = async (n: number, pred: (e: LiveEvent) => boolean = () => true): Promise<LiveEvent[]> => {
    for (let i = 0; i < 1500; i++) {
      if (events.length >= n) {
        const got = events.filter(pred)
        if (got.length >= n) return got
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`only ${events.filter(pred).length} of ${n} events: ${JSON.stringify(events.slice(-3))}`)
  }
  return { events, until, close }
}

function row(i: number, address: string, user: string | null, host: string, reason = 'none'): string {
  const blocked = reason === 'category'
  return formatRow(
    1_700_000_000_000 + i,
    false,
    address,
    host,
    blocked ? host : '',
    reason,
    blocked ? [1] : [],
    blocked ? [1] : [],
    user
  )
}

async function serve(
  t: TestContext,
  live: Record<string, number> = {}
): Promise<{ api: StartedApi; dir: string; part: string }> {
  const { dir: tmp, cleanup } = tempDir('filterd-live-')
  t.after(cleanup)
  const dir = join(tmp, 'csv')
  mkdirSync(dir, { recursive: true })
  const part = join(dir, `current-${process.pid}-1000.csv.part`)
  writeFileSync(part, CSV_HEADER)
  const api = await startApi({ liveLog: { dir, pollMs: 30, ...live } })
  t.after(() => api.close())
  return { api, dir, part }
}

test('streams the last rows on connect, then new rows, through a rotation, with each filter', async (t: TestContext) => {
  const { api, dir, part } = await serve(t)
  appendFileSync(
    part,
    row(1, '10.0.0.1', 'alice', 'old.example') +
      row(2, '10.0.0.2', null, 'anon.example') +
      row(3, '10.0.0.1', 'alice', 'casino.example', 'category')
  )
  const all = await openStream(t, `${api.base}/live/queries?last=2`)
  const first = await all.until(2)
  t.assert.deepStrictEqual(
    first.map((e) => e.data.host),
    ['anon.example', 'casino.example']
  )
  t.assert.deepStrictEqual(first[1]!.data, {
    time: 1_700_000_000_003,
    address: '10.0.0.1',
    user: 'alice',
    host: 'casino.example',
    blocked: true,
    reason: 'category',
    blockedHost: 'casino.example',
    cats: [1],
    blockedCats: [1],
    nxdomain: false
  })
  const alice = await openStream(t, `${api.base}/live/queries?user=alice&last=10`)
  const anon = await openStream(t, `${api.base}/live/queries?user=*anonymous*&last=10`)
  const blocked = await openStream(t, `${api.base}/live/queries?blocked=1&last=0`)
  const byAddress = await openStream(t, `${api.base}/live/queries?address=10.0.0.*&domain=CASINO&last=0`)
  t.assert.deepStrictEqual(
    (await alice.until(2)).map((e) => e.data.host),
    ['old.example', 'casino.example']
  )
  t.assert.deepStrictEqual(
    (await anon.until(1)).map((e) => e.data.host),
    ['anon.example']
  )
  // New rows, then a rotation (the DNS writer renames its file and opens the next one).
  appendFileSync(part, row(4, '10.0.0.1', 'alice', 'new.example'))
  appendFileSync(part, row(5, '10.0.0.7', 'bob', 'casino.example', 'category'))
  renameSync(part, join(dir, 'queries-20240101T000000000Z-1-0.csv'))
  writeFileSync(
    join(dir, `current-${process.pid}-2000.csv.part`),
    CSV_HEADER + row(6, '10.0.0.1', 'alice', 'after-rotation.example')
  )
  t.assert.deepStrictEqual((await all.until(5)).map((e) => e.data.host).slice(2), [
    'new.example',
    'casino.example',
    'after-rotation.example'
  ])
  t.assert.deepStrictEqual((await alice.until(4)).map((e) => e.data.host).slice(2), [
    'new.example',
    'after-rotation.example'
  ])
  t.assert.deepStrictEqual(
    (await blocked.until(1)).map((e) => [e.data.user, e.data.host]),
    [['bob', 'casino.example']]
  )
  t.assert.deepStrictEqual(
    (await byAddress.until(1)).map((e) => e.data.address),
    ['10.0.0.7']
  )
  t.assert.strictEqual(anon.events.length, 1)
  // Everybody leaves (the follower stops), somebody comes back: the backlog holds each row once.
  for (const s of [all, alice, anon, blocked, byAddress]) s.close()
  for (let i = 0; i < 200 && api.api.liveLog.clients > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  await new Promise((resolve) => setTimeout(resolve, 100))
  const again = await openStream(t, `${api.base}/live/queries?user=alice&last=10`)
  await again.until(1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.assert.deepStrictEqual(
    again.events.map((e) => e.data.host),
    ['after-rotation.example']
  )
})

test('refuses bad filters, and streams past the limit, with the API error body', async (t: TestContext) => {
  const { api } = await serve(t, { maxClients: 2 })
  for (const [q, field] of [
    ['user=bad%20id', 'user'],
    ['address=nope', 'address'],
    ['blocked=maybe', 'blocked'],
    ['last=5000', 'last'],
    ['domain=a%20b', 'domain']
  ]) {
    const r = await call(api.base, 'GET', `/live/queries?${q}`)
    t.assert.deepStrictEqual([r.status, errorOf(r).code, errorOf(r).field], [400, 'API_BAD_QUERY', field], q)
  }
  const a = await openStream(t, `${api.base}/live/queries`)
  const b = await openStream(t, `${api.base}/live/queries`)
  for (let i = 0; i < 200 && api.api.liveLog.clients < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  const r = await call(api.base, 'GET', '/live/queries')
  t.assert.deepStrictEqual([r.status, errorOf(r).code], [503, 'API_TOO_MANY_STREAMS'])
  a.close()
  b.close()
  for (let i = 0; i < 200 && api.api.liveLog.clients > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.assert.strictEqual(api.api.liveLog.clients, 0)
})

test('a client that stops reading loses rows, is told how many, holds at most its queue, and slows no other client', async (t: TestContext) => {
  const { api, part } = await serve(t, { maxQueue: 50, pollMs: 20 })
  // The stalled client: a raw socket that is never read (its receive window fills, then the server's send buffer).
  const stalled = connect(api.port, '127.0.0.1')
  await new Promise((resolve) => stalled.once('connect', resolve))
  stalled.pause()
  stalled.write('GET /live/queries?last=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  const reader = await openStream(t, `${api.base}/live/queries?last=0`)
  for (let i = 0; i < 200 && api.api.liveLog.clients < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  // A real collection before each reading, so the heap counts what is kept, not garbage not yet collected.
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  // About 40 MB of rows in batches, far more than the socket buffers hold.
  const pad = 'x'.repeat(200)
  const batches = 40
  const perBatch = 2000
  let received = 0
  for (let b = 0; b < batches; b++) {
    let text = ''
    for (let i = 0; i < perBatch; i++) text += row(b * perBatch + i, '10.0.0.1', 'alice', `q${b}-${i}-${pad}.example`)
    appendFileSync(part, text)
    await reader.until(perBatch)
    received += reader.events.length
    reader.events.length = 0 // the test's own client keeps nothing, so the heap shows the server's share
    t.assert.ok(api.api.liveLog.maxQueued <= 50, `queue ${api.api.liveLog.maxQueued}`)
  }
  // The reading client got every row although the other one stalled.
  t.assert.strictEqual(received, batches * perBatch)
  gc()
  const grown = process.memoryUsage().heapUsed - heapBefore
  t.assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${grown} bytes`)
  t.diagnostic(`heap grew by ${grown} bytes while ${batches * perBatch} rows went by a stalled client`)
  // The stalled client resumes: it is told about its lost rows.
  let text = ''
  stalled.setEncoding('utf8')
  stalled.on('data', (d: string) => {
    text = (text + d).slice(-200_000)
  })
  stalled.resume()
  // Once it has read what the buffers held, it gets the count of rows it lost, then the rows queued for it.
  for (let i = 0; i < 1500 && !text.includes('event: dropped'); i++)
    await new Promise((resolve) => setTimeout(resolve, 20))
  // A row written after that reaches it (one written while its queue was still full would be lost, as designed).
  appendFileSync(part, row(999_999, '10.0.0.1', 'alice', 'last.example'))
  for (let i = 0; i < 1500 && !text.includes('last.example'); i++)
    await new Promise((resolve) => setTimeout(resolve, 20))
  const dropped = /event: dropped\ndata: \{"rows":(\d+)\}/.exec(text)
  t.assert.ok(dropped !== null, 'no dropped event')
  t.assert.ok(Number(dropped[1]) > 1000, `dropped ${dropped[1]}`)
  t.assert.match(text, /last\.example/)
  stalled.destroy()
})

test('the backlog merges the rows of several DNS processes in time order, and reaches back past a rotation', async (t: TestContext) => {
  const { api, dir, part } = await serve(t)
  // Two DNS processes (proxy.processes: 2), each with its own files. The first process rotated a moment ago:
  // its closed file (not yet imported) holds the older rows, its new current file only one row.
  const closedA = join(dir, `queries-${fileStamp(Date.now())}-101-0.csv`)
  writeFileSync(
    closedA,
    CSV_HEADER +
      row(1, '10.0.0.1', 'alice', 'a1.example') +
      row(3, '10.0.0.1', 'alice', 'a3.example') +
      row(5, '10.0.0.1', 'alice', 'a5.example')
  )
  writeFileSync(join(dir, 'current-101-2000.csv.part'), CSV_HEADER + row(7, '10.0.0.1', 'alice', 'a7.example'))
  appendFileSync(
    part,
    row(2, '10.0.0.2', 'bob', 'b2.example') +
      row(4, '10.0.0.2', 'bob', 'b4.example') +
      row(6, '10.0.0.2', 'bob', 'b6.example') +
      row(8, '10.0.0.2', 'bob', 'b8.example')
  )
  // A file closed long ago is not reached back to.
  writeFileSync(
    join(dir, 'queries-20240101T000000000Z-102-0.csv'),
    CSV_HEADER + row(0, '10.0.0.3', null, 'old.example')
  )
  const hosts = ['a1', 'b2', 'a3', 'b4', 'a5', 'b6', 'a7', 'b8'].map((h) => `${h}.example`)
  const all = await openStream(t, `${api.base}/live/queries?last=100`)
  t.assert.deepStrictEqual(
    (await all.until(8)).map((e) => e.data.host),
    hosts
  )
  const lastThree = await openStream(t, `${api.base}/live/queries?last=3`)
  t.assert.deepStrictEqual(
    (await lastThree.until(3)).map((e) => e.data.host),
    hosts.slice(-3)
  )
  // Rows that come later go into their place too: a client joining now gets one ordered backlog.
  appendFileSync(
    join(dir, 'current-101-2000.csv.part'),
    row(9, '10.0.0.1', 'alice', 'a9.example') + row(11, '10.0.0.1', 'alice', 'a11.example')
  )
  appendFileSync(part, row(10, '10.0.0.2', 'bob', 'b10.example'))
  await all.until(11)
  const later = await openStream(t, `${api.base}/live/queries?last=5`)
  t.assert.deepStrictEqual(
    (await later.until(5)).map((e) => e.data.host),
    ['a7', 'b8', 'a9', 'b10', 'a11'].map((h) => `${h}.example`)
  )
})

test('the backlog keeps the newest rows in time order, whatever order the blocks come in', (t: TestContext) => {
  const rowAt = (created: number): StatsRow => ({
    ...decodeRow(parseOne(row(0, '10.0.0.1', null, 'x.example')))!,
    created
  })
  const b = new Backlog(5)
  b.add([rowAt(10), rowAt(30), rowAt(50)])
  b.add([rowAt(20), rowAt(40), rowAt(60)])
  t.assert.deepStrictEqual(
    b.rows.map((r) => r.created),
    [20, 30, 40, 50, 60]
  )
  b.add([rowAt(5)]) // older than everything kept: it falls off at once
  t.assert.deepStrictEqual(
    b.rows.map((r) => r.created),
    [20, 30, 40, 50, 60]
  )
  b.add([rowAt(70), rowAt(45)]) // a block out of order in itself
  t.assert.deepStrictEqual(
    b.rows.map((r) => r.created),
    [40, 45, 50, 60, 70]
  )
  b.clear()
  t.assert.strictEqual(b.rows.length, 0)
})

function parseOne(line: string): string[] {
  const out: string[][] = []
  parseRecords(line, 0, 1, out)
  return out[0]!
}

test('a row names the subscription or feed that decided (source), and leaves the field out when none did', (t: TestContext) => {
  const out: string[][] = []
  parseRecords(
    formatRow(
      7,
      false,
      '10.0.0.1',
      'ads.example',
      'ads.example',
      'global-blacklist',
      [],
      [],
      'alice',
      null,
      'list:ads'
    ) + formatRow(8, false, '10.0.0.1', 'own.example', 'own.example', 'global-blacklist', [], [], 'alice'),
    0,
    Infinity,
    out
  )
  const [listed, own] = out.map((f) => liveRow(decodeRow(f)!))
  t.assert.strictEqual(listed?.source, 'list:ads')
  t.assert.strictEqual(listed?.reason, 'global-blacklist')
  t.assert.strictEqual(own !== undefined && 'source' in own, false)
})
