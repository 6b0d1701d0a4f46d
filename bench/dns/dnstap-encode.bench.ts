// What dnstap adds to each query on the DNS path (proxy.dnstap): filling the event, the Policy
// mapping, the hand-written protobuf encoding into the Frame Streams writer's chunk (engine/dnstap)
// and the socket writes (one per event-loop turn) to a real collector, Debian's fstrm_capture
// writing to /dev/null (its CPU is not counted: it is another process). Batches of 64 queries per
// event-loop turn, as the native front delivers them.
// Run: npm run build && node dist/bench/dns/dnstap-encode.bench.js   (needs fstrm_capture: apt-get install fstrm-bin)
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import dnsPacket from 'dns-packet'
import { DnstapEncoder, DnstapEvent, FrameStreamWriter, PROTOCOL_UDP, fillPolicy } from '../../engine/dnstap/index.js'
import type { QueryLogRecord } from '../../engine/querylog/index.js'

const blockedQuery = dnsPacket.encode({
  type: 'query',
  id: 1,
  flags: dnsPacket.RECURSION_DESIRED,
  questions: [{ type: 'A', name: 'www.casino.example' }]
})
const blockedAnswer = dnsPacket.encode({
  type: 'response',
  id: 1,
  flags: 0x8180,
  questions: [{ type: 'A', name: 'www.casino.example' }],
  answers: [{ type: 'A', name: 'www.casino.example', ttl: 60, data: '192.0.2.1' }]
})
const fwdQuery = dnsPacket.encode({
  type: 'query',
  id: 2,
  flags: dnsPacket.RECURSION_DESIRED,
  questions: [{ type: 'A', name: 'www.news-site.example.org' }]
})
const fwdAnswer = dnsPacket.encode({
  type: 'response',
  id: 2,
  flags: 0x8180,
  questions: [{ type: 'A', name: 'www.news-site.example.org' }],
  answers: [
    { type: 'CNAME', name: 'www.news-site.example.org', ttl: 300, data: 'cdn.example.net' },
    { type: 'A', name: 'cdn.example.net', ttl: 60, data: '198.51.100.7' },
    { type: 'A', name: 'cdn.example.net', ttl: 60, data: '198.51.100.8' }
  ]
})
const base: QueryLogRecord = {
  time: Date.now(),
  address: '10.1.2.3',
  user: 'u1',
  name: '',
  qtype: 1,
  blockedName: '',
  reason: 'none',
  cats: [],
  blockedCats: [],
  nxdomain: false,
  rcode: 0
}
const blockedRec: QueryLogRecord = {
  ...base,
  name: 'www.casino.example',
  blockedName: 'casino.example',
  reason: 'category',
  blockedCats: [30]
}
const fwdRec: QueryLogRecord = { ...base, name: 'www.news-site.example.org' }

const dir = mkdtempSync(join(tmpdir(), 'filterd-dnstap-bench-'))
const sock = join(dir, 'dnstap.sock')
const capture = spawn('fstrm_capture', ['-t', 'protobuf:dnstap.Dnstap', '-u', sock, '-w', '/dev/null'], {
  stdio: 'ignore'
})
for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((resolve) => setTimeout(resolve, 50))
const writer = new FrameStreamWriter({ target: { kind: 'unix', path: sock }, queueBytes: 4 << 20 })
writer.start()
while (!writer.connected) await new Promise((resolve) => setTimeout(resolve, 20))
const encoder = new DnstapEncoder(writer, { identity: 'bench-host', version: 'filterd' })
const e = new DnstapEvent()

function one(rec: QueryLogRecord, query: Buffer, answer: Buffer): void {
  e.protocol = PROTOCOL_UDP
  e.address = rec.address
  e.port = 53124
  e.queryTimeMs = rec.time
  e.responseTimeMs = Date.now()
  e.query = query
  e.queryId = -1
  e.response = answer
  e.responseLength = answer.length
  fillPolicy(e, rec, answer, answer.length)
  encoder.write(e)
}

const turn = async (): Promise<void> => {
  await new Promise((resolve) => setImmediate(resolve))
}

for (const [label, rec, q, a] of [
  ['blocked (Policy, block-page answer)', blockedRec, blockedQuery, blockedAnswer],
  ['forwarded (no Policy, CNAME + 2 A)', fwdRec, fwdQuery, fwdAnswer]
] as const) {
  for (let i = 0; i < 200_000; i++) {
    one(rec, q, a)
    if (i % 64 === 63) await turn()
  } // warm-up
  const n = 1_000_000
  const d0 = writer.droppedFrames
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    one(rec, q, a)
    if (i % 64 === 63) await turn()
  }
  const c = process.cpuUsage(c0)
  const wall = Number(process.hrtime.bigint() - t0) / 1000
  console.log(
    `${label}: ${((c.user + c.system) / n).toFixed(3)} µs of CPU per query (wall ${(wall / n).toFixed(3)} µs); query ${q.length} B, answer ${a.length} B; ${writer.droppedFrames - d0} dropped`
  )
}
// The same loop without dnstap: what the turns themselves cost, to subtract.
{
  const n = 1_000_000
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    if (i % 64 === 63) await turn()
  }
  const c = process.cpuUsage(c0)
  console.log(`(the event-loop turns alone: ${((c.user + c.system) / n).toFixed(3)} µs per query)`)
}
await writer.close()
capture.kill('SIGINT')
rmSync(dir, { recursive: true, force: true })
console.log(
  `node ${process.version}; load average ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`
)
