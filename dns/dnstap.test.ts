/**
 * `proxy.dnstap`: the DNS role's dnstap stream, read by tools no one here wrote. Debian's
 * fstrm_capture (fstrm-bin) takes the stream over the bidirectional Frame Streams handshake and
 * writes it to a file; dnstap-ldns (dnstap-ldns) and dnstap-read (bind9-dnsutils) decode it, and
 * the messages must match what dig asked and got: names, types, RCODEs, addresses. Those readers
 * predate dnstap's Policy message, so the policy of each query is checked by decoding the same
 * file with the test's own reader of dnstap.proto (engine/dnstap/testing/decode.ts).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createSocket } from 'node:dgram'
import { createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../engine/categories/index.js'
import { addUser, dig, digMissing, query, udpAsk, world, writeConfigFile, type World } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'
import { until } from '../engine/testing/wait.js'
import { decodeDnstap, readFstrmFile, wireName, type DecodedMessage } from '../engine/dnstap/testing/decode.js'
import {
  controlFrame,
  readControlFrame,
  CONTROL_ACCEPT,
  CONTROL_READY,
  DNSTAP_CONTENT_TYPE
} from '../engine/dnstap/fstrm.js'

const CT = DNSTAP_CONTENT_TYPE

function toolsMissing(t: TestContext): boolean {
  const missing = ['fstrm_capture', 'dnstap-ldns', 'dnstap-read'].filter(
    (tool) => !['/usr/bin', '/usr/local/bin', '/bin', '/usr/sbin'].some((d) => existsSync(join(d, tool)))
  )
  if (missing.length === 0) return false
  if (process.env.CI !== undefined && process.env.CI !== '')
    throw new Error(`${missing.join(', ')} required in CI (apt-get install fstrm-bin dnstap-ldns bind9-dnsutils)`)
  t.skip(`${missing.join(', ')} not installed (apt-get install fstrm-bin dnstap-ldns bind9-dnsutils)`)
  return true
}

/** fstrm_capture on a Unix socket (`-u`) or a TCP port (`-a`/`-p`), writing `file`. */
async function startCapture(
  t: TestContext,
  listen: { unix: string } | { port: number },
  file: string
): Promise<{ stop: () => Promise<void>; proc: ChildProcess }> {
  const where = 'unix' in listen ? ['-u', listen.unix] : ['-a', '127.0.0.1', '-p', String(listen.port)]
  const proc = spawn('fstrm_capture', ['-t', CT, ...where, '-w', file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  proc.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d
  })
  let exited = false
  proc.on('exit', () => {
    exited = true
  })
  const stop = async (): Promise<void> => {
    if (exited) return
    const done = once(proc, 'exit')
    proc.kill('SIGINT')
    await done
  }
  t.after(stop)
  // It logs once it listens (and the Unix socket file then exists).
  await until(
    'fstrm_capture listening',
    () => exited || /listening|opened/i.test(stderr) || ('unix' in listen && existsSync(listen.unix)),
    20_000
  )
  if (exited) throw new Error(`fstrm_capture exited: ${stderr}`)
  return { stop, proc }
}

async function run(cmd: string, args: string[]): Promise<string> {
  return await new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 20_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err !== null) {
        reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`))
        return
      }
      resolve(stdout)
    })
  })
}

async function filteringWorld(t: TestContext): Promise<World> {
  const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
  await addUser(
    w.store,
    { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] },
    { black: ['ads.example'], white: ['ok.casino.example'] }
  )
  return w
}

/** The decoded messages of `file`, by query name and type. */
function framesOf(file: string): Map<string, DecodedMessage> {
  const { contentType, frames } = readFstrmFile(readFileSync(file))
  if (contentType !== CT) throw new Error(`content type ${contentType}`)
  const out = new Map<string, DecodedMessage>()
  for (const f of frames) {
    const d = decodeDnstap(f)
    const m = d.message!
    const q = dnsPacket.decode(m.queryMessage!)
    out.set(`${q.questions![0]!.name} ${q.questions![0]!.type}`, m)
  }
  return out
}

test('dnstap over a Unix socket from 2 front processes: fstrm_capture takes it, dnstap-ldns and dnstap-read decode the queries dig sent, Policy says why', async (t: TestContext) => {
  if (toolsMissing(t)) return
  if ((await dig(['-v'])) === undefined) {
    digMissing(t)
    return
  }
  const w = await filteringWorld(t)
  const sock = join(w.dir, 'dnstap.sock')
  const file = join(w.dir, 'capture.fstrm')
  const capture = await startCapture(t, { unix: sock }, file)
  const mport = await releasedPort()
  const dns = await startRole(
    t,
    'dns',
    writeConfigFile(w, {
      proxy: {
        dnstap: `unix:${sock}`,
        processes: 2,
        'dnstap-identity': 'dns-test',
        'metrics-listen': `127.0.0.1:${mport}`
      }
    })
  )
  const p = String(dns.port)
  const asked: Array<{ name: string; type: string; tcp?: boolean; rcode: string; answer?: string }> = [
    { name: 'allowed.example', type: 'A', rcode: 'NOERROR', answer: '198.51.100.10' },
    { name: 'casino.example', type: 'A', rcode: 'NOERROR', answer: '192.0.2.1' },
    { name: 'casino.example', type: 'AAAA', rcode: 'NOERROR', answer: '2001:db8::b10c' },
    { name: 'ads.example', type: 'AAAA', tcp: true, rcode: 'NOERROR', answer: '2001:db8::b10c' },
    { name: 'ok.casino.example', type: 'A', rcode: 'NOERROR', answer: '198.51.100.10' },
    { name: 'casino.example', type: 'MX', rcode: 'NOERROR' },
    { name: 'nothing.invalid', type: 'A', rcode: 'NXDOMAIN' }
  ]
  for (const q of asked) {
    const out = await dig([
      `@127.0.0.1`,
      '-p',
      p,
      ...(q.tcp === true ? ['+tcp'] : []),
      '+tries=1',
      '+time=5',
      q.name,
      q.type
    ])
    t.assert.match(out!, new RegExp(`status: ${q.rcode}`), `dig ${q.name} ${q.type}`)
  }
  // Every frame handed to the collector, by both processes (their snapshots come every 5 s); the
  // role's stop then ends each stream with STOP and the collector's FINISH.
  await until(
    'all frames sent',
    async () => {
      const text = await (await fetch(`http://127.0.0.1:${mport}/metrics`)).text()
      let sent = 0
      for (const line of text.split('\n'))
        if (line.startsWith('filterd_dns_dnstap_frames_total{')) sent += Number(line.split(' ')[1])
      return sent === asked.length
    },
    30_000,
    250
  )
  await dns.stop()
  await capture.stop()

  const frames = framesOf(file)
  t.assert.strictEqual(frames.size, asked.length, [...frames.keys()].join(', '))

  // dnstap-ldns: every query with its answer (YAML: both messages in ldns's text form).
  const ldns = await run('dnstap-ldns', ['-y', '-r', file])
  const bind = await run('dnstap-read', ['-y', file])
  for (const text of [ldns, bind]) {
    const docs = text.split(/^---$/m).filter((d) => /CLIENT_RESPONSE/.test(d))
    t.assert.strictEqual(docs.length, asked.length, text)
    for (const q of asked) {
      // The question as each prints it: ";name.<tab>IN<tab>TYPE" (ldns) or "'name. IN TYPE'" (BIND).
      const question = new RegExp(`(^|[\\s;'])${q.name.replace(/\./g, '\\.')}\\.\\s+IN\\s+${q.type}(\\s|'|$)`, 'm')
      const doc = docs.find((d) => question.test(d))
      t.assert.ok(doc !== undefined, `no message for ${q.name} ${q.type} in\n${text}`)
      t.assert.match(doc, /query_address: "?127\.0\.0\.1"?\n/)
      t.assert.match(doc, new RegExp(`socket_protocol: ${q.tcp === true ? 'TCP' : 'UDP'}`))
      const response = doc.slice(doc.indexOf('response_message'))
      t.assert.match(response, new RegExp(`(rcode|status): ${q.rcode}\\b`))
      if (q.answer !== undefined)
        t.assert.match(response, new RegExp(`\\sIN\\s+${q.type}\\s+${q.answer.replace(/\./g, '\\.')}\\s`))
    }
  }
  t.assert.match(ldns, /identity: "dns-test"/)
  t.assert.match(bind, /identity: dns-test/)

  // Policy, with the current dnstap.proto.
  const policy = (k: string): DecodedMessage['policy'] => frames.get(k)?.policy
  t.assert.strictEqual(policy('allowed.example A'), undefined, 'no rule touched it: no Policy')
  t.assert.strictEqual(policy('nothing.invalid A'), undefined)
  const casino = policy('casino.example A')!
  t.assert.deepStrictEqual(
    { ...casino, value: wireName(casino.value!) },
    { type: 'filterd', rule: `category:${CATEGORY.GAMBLING}`, action: 6, match: 1, value: 'casino.example' }
  )
  t.assert.strictEqual(policy('casino.example AAAA')?.action, 6, 'LOCAL_DATA: the block-page address')
  t.assert.strictEqual(policy('casino.example MX')?.action, 2, 'NODATA: no block-page record for MX')
  const ads = policy('ads.example AAAA')!
  t.assert.deepStrictEqual([ads.rule, ads.action, wireName(ads.value!)], ['user-blacklist', 6, 'ads.example'])
  t.assert.deepStrictEqual(
    [policy('ok.casino.example A')?.rule, policy('ok.casino.example A')?.action],
    ['user-whitelist', 3]
  )
  const m = frames.get('casino.example A')!
  t.assert.deepStrictEqual(
    [m.type, m.socketFamily, m.socketProtocol, [...m.queryAddress!].join('.')],
    [6, 1, 1, '127.0.0.1']
  )
  t.assert.ok(m.queryPort! > 0 && m.queryPort! < 65536)
  const now = Date.now() / 1000
  t.assert.ok(Math.abs(m.queryTimeSec! - now) < 120 && m.responseTimeSec! >= m.queryTimeSec!)
  // The forwarded query carries the client's own ID, as the answer does.
  const fwd = frames.get('allowed.example A')!
  t.assert.strictEqual(fwd.queryMessage!.readUInt16BE(0), fwd.responseMessage!.readUInt16BE(0))
})

test('dnstap over TCP with node:dgram and the worker pool; a collector that comes late gets the queued frames', async (t: TestContext) => {
  if (toolsMissing(t)) return
  const w = await filteringWorld(t)
  const port = await releasedPort()
  const file = join(w.dir, 'capture.fstrm')
  // The collector is not there yet: the server starts anyway, says so once, and queues.
  const dns = await startRole(
    t,
    'dns',
    writeConfigFile(w, {
      proxy: { dnstap: `tcp:127.0.0.1:${port}`, io: 'dgram', dispatch: 'pool', 'log-level': 'info' }
    })
  )
  await dns.waitForLog((l) => l.msg === 'dnstap: collector unreachable; queueing, then dropping, until it is back')
  const names = ['casino.example', 'allowed.example', 'www.casino.example']
  for (const name of names) await udpAsk(dns.port, query(name, 'A'))
  const capture = await startCapture(t, { port }, file)
  // Reconnection backs off to at most 5 s between tries.
  await dns.waitForLog((l) => l.msg === 'dnstap: collector connected again')
  await udpAsk(dns.port, query('late.example', 'AAAA'))
  await dns.stop()
  await capture.stop()
  const frames = framesOf(file)
  t.assert.deepStrictEqual([...frames.keys()].sort(), [
    'allowed.example A',
    'casino.example A',
    'late.example AAAA',
    'www.casino.example A'
  ])
  t.assert.strictEqual(frames.get('www.casino.example A')?.policy?.rule, `category:${CATEGORY.GAMBLING}`)
  const text = await run('dnstap-read', ['-y', file])
  t.assert.match(text, /late\.example\.\s+\d+\s+IN\s+AAAA\s+2001:db8::10/)
  t.assert.match(text, /socket_protocol: UDP/)
})

/** Sends `n` copies of `msg` over UDP, at most `window` unanswered at a time; resolves with the answers counted. */
async function blast(port: number, msg: Buffer, n: number, window = 64): Promise<number> {
  const sock = createSocket('udp4')
  let answered = 0
  let sent = 0
  sock.on('message', () => {
    answered++
  })
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve))
  try {
    while (sent < n) {
      const round = Math.min(window, n - sent)
      const target = answered + round
      for (let i = 0; i < round; i++) sock.send(msg, port, '127.0.0.1')
      sent += round
      // A lost datagram on a loaded loopback would leave the round short: give up on it after 5 s.
      await until('a round of answers', () => answered >= target, 5000).catch(() => {})
    }
    return answered
  } finally {
    sock.close()
  }
}

async function metricsValue(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name}{process="dns-0"} `))
  return line === undefined ? -1 : Number(line.split(' ')[1])
}

test('a collector that stops reading, or is not there, costs DNS nothing: every query is answered, dropped frames are counted on /metrics', async (t: TestContext) => {
  const w = await filteringWorld(t)
  // A collector that accepts the stream and then never reads another byte.
  const stuckPath = join(w.dir, 'stuck.sock')
  const conns: Socket[] = []
  const stuck = createServer((c) => {
    conns.push(c)
    let buf = Buffer.alloc(0)
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d])
      const r = readControlFrame(buf)
      if (r === null || 'problem' in r || r.frame.type !== CONTROL_READY) return
      c.write(controlFrame(CONTROL_ACCEPT, [CT]))
      c.pause()
    })
  })
  stuck.listen(stuckPath)
  await once(stuck, 'listening')
  t.after(() => {
    for (const c of conns) c.destroy()
    stuck.close()
  })
  const blocked = query('casino.example', 'A')
  for (const [label, path, n] of [
    ['stuck', stuckPath, 12_000],
    ['absent', join(w.dir, 'nobody-listens.sock'), 2000]
  ] as const) {
    const mport = await releasedPort()
    const dns = await startRole(
      t,
      'dns',
      writeConfigFile(w, {
        proxy: { dnstap: `unix:${path}`, 'dnstap-queue': 65536, 'metrics-listen': `127.0.0.1:${mport}` }
      })
    )
    if (label === 'stuck') await until('the stuck collector got a connection', () => conns.length > 0, 20_000)
    t.assert.strictEqual(await blast(dns.port, blocked, n), n, `${label}: every query answered`)
    // Snapshots are published every 5 s.
    let dropped = -1
    let frames = -1
    await until(
      `${label}: drops on /metrics`,
      async () => {
        dropped = await metricsValue(mport, 'filterd_dns_dnstap_dropped_total')
        frames = await metricsValue(mport, 'filterd_dns_dnstap_frames_total')
        return dropped > 0 && frames >= 0
      },
      20_000,
      200
    )
    t.assert.ok(frames + dropped <= n, `${label}: ${frames} sent + ${dropped} dropped <= ${n}`)
    if (label === 'absent') t.assert.strictEqual(frames, 0)
    else t.assert.ok(frames > 0, 'the stuck collector took frames until its socket filled')
    await dns.stop()
  }
})
