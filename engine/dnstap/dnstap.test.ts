/**
 * engine/dnstap: the encoder's fields read back by the test's own dnstap.proto reader, at the
 * varint boundaries that a hand-written encoder gets wrong first; the bounded queue; and a writer
 * whose collector (Debian's fstrm_capture) goes away and comes back.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import type { QueryLogRecord } from '../querylog/index.js'
import { tempDir } from '../testing/temp.js'
import { until } from '../testing/wait.js'
import {
  DnstapEncoder,
  DnstapEvent,
  FrameStreamWriter,
  POLICY_LOCAL_DATA,
  PROTOCOL_TCP,
  fillPolicy,
  parseDnstapTarget
} from './index.js'
import { varintSize, writeVarint } from './protobuf.js'
import { decodeDnstap, protobufFields, readFstrmFile, wireName } from './testing/decode.js'

// The frames a never-started writer holds: its chunk from 0 (tests write less than one chunk).
function heldFrames(w: FrameStreamWriter): Buffer[] {
  const out: Buffer[] = []
  let off = 0
  while (off < w.used) {
    const len = w.chunk.readUInt32BE(off)
    out.push(w.chunk.subarray(off + 4, off + 4 + len))
    off += 4 + len
  }
  return out
}

const unstarted = (queueBytes = 1 << 20): FrameStreamWriter =>
  new FrameStreamWriter({ target: { kind: 'unix', path: '/nonexistent/dnstap.sock' }, queueBytes })

test('varints round-trip at every 7-bit boundary up to 2^53', (t: TestContext) => {
  const buf = Buffer.alloc(16)
  for (const n of [
    0,
    1,
    127,
    128,
    16383,
    16384,
    2 ** 21 - 1,
    2 ** 21,
    2 ** 28 - 1,
    2 ** 28,
    2 ** 31,
    2 ** 32 + 5,
    2 ** 35,
    2 ** 53 - 1
  ]) {
    const end = writeVarint(buf, 0, n)
    t.assert.strictEqual(end, varintSize(n), `size of ${n}`)
    t.assert.deepStrictEqual(protobufFields(Buffer.concat([Buffer.from([0x08]), buf.subarray(0, end)])).get(1), [n])
  }
})

test('a CLIENT_RESPONSE carries both messages, the socket, the times and the Policy, whatever the sizes', (t: TestContext) => {
  const w = unstarted()
  const enc = new DnstapEncoder(w, { identity: 'host-1', version: 'filterd' })
  const e = new DnstapEvent()
  const query = Buffer.from('1234' + '00'.repeat(20), 'hex')
  // A 20,000-byte answer (a 3-byte length) and a 200-character rule (a 2-byte length).
  const response = Buffer.alloc(20_000, 7)
  response.writeUInt16BE(0x1234, 0)
  e.protocol = PROTOCOL_TCP
  e.address = '2001:db8::53'
  e.port = 65535
  e.queryTimeMs = 1_764_000_000_123
  e.responseTimeMs = 1_764_000_001_999
  e.query = query
  e.queryId = 0xbeef
  e.response = response
  e.responseLength = 19_000
  e.policyRule = 'r'.repeat(200)
  e.policyAction = POLICY_LOCAL_DATA
  e.policyValue = 'ads.example'
  t.assert.ok(enc.write(e))
  // The second: IPv4, port 0, no policy.
  e.address = '10.0.0.255'
  e.port = 0
  e.queryId = -1
  e.policyRule = ''
  t.assert.ok(enc.write(e))
  const [a, b] = heldFrames(w).map(decodeDnstap)
  t.assert.deepStrictEqual([a!.identity, a!.version, a!.type], ['host-1', 'filterd', 1])
  const m = a!.message!
  t.assert.deepStrictEqual([m.type, m.socketFamily, m.socketProtocol, m.queryPort], [6, 2, 2, 65535])
  t.assert.strictEqual(m.queryAddress!.toString('hex'), '20010db8000000000000000000000053')
  t.assert.deepStrictEqual(
    [m.queryTimeSec, m.queryTimeNsec, m.responseTimeSec, m.responseTimeNsec],
    [1_764_000_000, 123_000_000, 1_764_000_001, 999_000_000]
  )
  t.assert.strictEqual(m.queryMessage!.readUInt16BE(0), 0xbeef, 'the client ID in the copy')
  t.assert.strictEqual(query.readUInt16BE(0), 0x1234, "the caller's bytes untouched")
  t.assert.deepStrictEqual(m.responseMessage, response.subarray(0, 19_000))
  t.assert.deepStrictEqual(
    { ...m.policy, value: wireName(m.policy!.value!) },
    { type: 'filterd', rule: 'r'.repeat(200), action: 6, match: 1, value: 'ads.example' }
  )
  t.assert.deepStrictEqual(
    [[...b!.message!.queryAddress!].join('.'), b!.message!.queryPort, b!.message!.policy, b!.message!.socketFamily],
    ['10.0.0.255', 0, undefined, 1]
  )
})

test('the Policy action is read from the answer: NXDOMAIN, NODATA, LOCAL_DATA; whitelists PASS; no rule, no Policy', (t: TestContext) => {
  const e = new DnstapEvent()
  const rec: QueryLogRecord = {
    time: 0,
    address: '',
    user: null,
    name: 'x.example',
    qtype: 1,
    blockedName: 'x.example',
    reason: 'global-blacklist',
    cats: [],
    blockedCats: [],
    nxdomain: false,
    rcode: 0
  }
  const answer = (rcode: number, ancount: number): Buffer => {
    const b = Buffer.alloc(12)
    b[3] = rcode
    b.writeUInt16BE(ancount, 6)
    return b
  }
  const act = (r: QueryLogRecord, a: Buffer): [string, number] => {
    fillPolicy(e, r, a, a.length)
    return [e.policyRule, e.policyAction]
  }
  t.assert.deepStrictEqual(act(rec, answer(0, 1)), ['global-blacklist', 6])
  t.assert.deepStrictEqual(act(rec, answer(0, 0)), ['global-blacklist', 2])
  t.assert.deepStrictEqual(act(rec, answer(3, 0)), ['global-blacklist', 1])
  t.assert.deepStrictEqual(act({ ...rec, reason: 'category', blockedCats: [10, 12] }, answer(0, 1)), [
    'category:10,12',
    6
  ])
  t.assert.deepStrictEqual(act({ ...rec, reason: 'global-whitelist', blockedName: '' }, answer(0, 1)), [
    'global-whitelist',
    3
  ])
  t.assert.deepStrictEqual(act({ ...rec, reason: 'none', blockedName: '' }, answer(0, 1)), ['', 0])
})

test('the queue is bounded: past queueBytes frames are dropped and counted, nothing is written', (t: TestContext) => {
  const w = unstarted(65536)
  const enc = new DnstapEncoder(w, { identity: '', version: '' })
  const e = new DnstapEvent()
  e.address = '127.0.0.1'
  e.query = Buffer.alloc(100)
  e.response = Buffer.alloc(1000)
  e.responseLength = 1000
  let kept = 0
  for (let i = 0; i < 200; i++) if (enc.write(e)) kept++
  t.assert.ok(kept > 50 && kept < 65, `${kept} frames of ~1.1 KB kept in 64 KiB`)
  t.assert.strictEqual(w.droppedFrames, 200 - kept)
  t.assert.strictEqual(w.sentFrames, 0)
})

test('proxy.dnstap targets: unix with an absolute path, tcp with a port', (t: TestContext) => {
  t.assert.deepStrictEqual(parseDnstapTarget('unix:/run/dnstap.sock'), {
    target: { kind: 'unix', path: '/run/dnstap.sock' }
  })
  t.assert.deepStrictEqual(parseDnstapTarget('tcp:[::1]:6000'), { target: { kind: 'tcp', host: '::1', port: 6000 } })
  for (const bad of ['unix:run/x.sock', 'tcp:127.0.0.1', 'tcp:127.0.0.1:0', 'udp:127.0.0.1:6000'])
    t.assert.ok('problem' in parseDnstapTarget(bad), bad)
})

test('a collector that goes away and comes back: the writer reconnects, does the handshake again and delivers', async (t: TestContext) => {
  if (!existsSync('/usr/bin/fstrm_capture')) {
    if (process.env.CI !== undefined && process.env.CI !== '')
      throw new Error('fstrm_capture is required in CI (apt-get install fstrm-bin)')
    t.skip('fstrm_capture not installed (apt-get install fstrm-bin)')
    return
  }
  const dir = tempDir(t, 'filterd-dnstap-')
  const sock = join(dir, 'tap.sock')
  const capture = async (file: string): Promise<() => Promise<void>> => {
    const p = spawn('fstrm_capture', ['-t', 'protobuf:dnstap.Dnstap', '-u', sock, '-w', file], { stdio: 'ignore' })
    const exited = once(p, 'exit')
    const stop = async (): Promise<void> => {
      if (p.exitCode === null && p.signalCode === null) {
        p.kill('SIGINT')
        await exited
      }
    }
    t.after(stop)
    await until('fstrm_capture listening', () => existsSync(sock), 20_000)
    return stop
  }
  const stop1 = await capture(join(dir, 'one.fstrm'))
  const w = new FrameStreamWriter({ target: { kind: 'unix', path: sock }, queueBytes: 1 << 20, reconnectMaxMs: 200 })
  t.after(async () => {
    await w.close()
  })
  const enc = new DnstapEncoder(w, { identity: 'x', version: '' })
  const e = new DnstapEvent()
  e.address = '127.0.0.1'
  const send = (name: string): void => {
    e.query = Buffer.from(name)
    e.response = e.query
    e.responseLength = e.query.length
    enc.write(e)
  }
  w.start()
  await until('connected', () => w.connected, 20_000)
  send('first')
  await until('sent', () => w.sentFrames === 1, 20_000)
  await stop1()
  await until('the writer saw the collector go', () => !w.connected, 20_000)
  send('queued while away')
  const stop2 = await capture(join(dir, 'two.fstrm'))
  await until('connected again', () => w.connected, 20_000)
  send('after')
  await w.close()
  await stop2()
  const names = (file: string): string[] =>
    readFstrmFile(readFileSync(join(dir, file))).frames.map((f) => decodeDnstap(f).message!.queryMessage!.toString())
  t.assert.deepStrictEqual(names('one.fstrm'), ['first'])
  t.assert.deepStrictEqual(names('two.fstrm'), ['queued while away', 'after'])
})
