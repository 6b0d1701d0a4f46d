// engine/wire against dns-packet on the per-packet work of the front loop:
// parse a query and build every suffix key of its name (what the store's
// suffix walk needs), then write a block answer.
// Run: npm run build && node dist/bench/wire/read-query.bench.js  (BENCH_MS=50 for a smoke run)
import { Bench } from 'tinybench'
import dnsPacket from 'dns-packet'
import {
  QueryScratch,
  compileBlockAnswer,
  ANSWER_BUFFER_SIZE,
  keyOf,
  readQuery,
  writeBlockAnswer
} from '../../engine/wire/index.js'

function q(name: string, type: dnsPacket.RecordType, edns = false): Buffer {
  const packet: dnsPacket.Packet = {
    type: 'query',
    id: 0x2a2a,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type, name }]
  }
  if (edns) {
    packet.additionals = [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: 1232,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: dnsPacket.DNSSEC_OK,
        flag_do: true,
        options: [{ code: 8, family: 1, sourcePrefixLength: 24, ip: '198.51.100.0' }]
      }
    ]
  }
  return dnsPacket.encode(packet)
}

const cases: Record<string, Buffer> = {
  'short (a.io)': q('a.io', 'A'),
  'typical (www.example.com)': q('www.Example.com', 'A'),
  'deep cdn (e1234.dscb.akamaiedge.net.edgekey.example.net)': q(
    'e1234.dscb.akamaiedge.net.edgekey.example.net',
    'AAAA'
  ),
  'edns+ecs+do (www.example.com)': q('www.example.com', 'A', true)
}

const scratch = new QueryScratch()
const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
const block = compileBlockAnswer({ ipv4: '192.0.2.1', ipv6: '2001:db8::1', ttl: 60, edeExtraText: 'blocked' })
let sink = 0

// The dns-packet baseline does the same work: decode, lower-case, every suffix.
function dnsPacketKeys(msg: Buffer): void {
  const d = dnsPacket.decode(msg)
  const name = d.questions![0]!.name.toLowerCase()
  for (let i = 0; i !== -1; i = name.indexOf('.', i + 1)) sink += name.substring(i === 0 ? 0 : i + 1).length
}

function dnsPacketBlock(msg: Buffer): void {
  const d = dnsPacket.decode(msg)
  const question = d.questions![0]!
  const answers: dnsPacket.Answer[] =
    question.type === 'A'
      ? [{ type: 'A', name: question.name, ttl: 60, data: '192.0.2.1' }]
      : [{ type: 'AAAA', name: question.name, ttl: 60, data: '2001:db8::1' }]
  const additionals: dnsPacket.Answer[] = (d.additionals ?? []).some((a) => a.type === 'OPT')
    ? [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: 1232,
          extendedRcode: 0,
          ednsVersion: 0,
          flags: 0,
          flag_do: false,
          options: [
            { code: 15 as 8, data: Buffer.from([0, 15, 98, 108, 111, 99, 107, 101, 100]) } as dnsPacket.PacketOpt
          ]
        }
      ]
    : []
  sink += dnsPacket.encode({
    type: 'response',
    id: d.id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [question],
    answers,
    additionals
  }).length
}

const time = Number(process.env.BENCH_MS ?? 500)
// Each sample runs REPS calls: one call is ~0.2-0.5 µs, close to the timer's
// own cost, so single-call samples would mostly measure the clock.
const REPS = 64
const bench = new Bench({ time, warmup: true, warmupTime: Math.min(100, time), throws: true })
for (const [name, msg] of Object.entries(cases)) {
  bench.add(`readQuery+keyOf* / ${name}`, () => {
    for (let r = 0; r < REPS; r++) {
      readQuery(msg, scratch)
      for (let k = 0; k < scratch.labelCount; k++) sink += keyOf(scratch, k).length
    }
  })
  bench.add(`dns-packet decode+suffixes / ${name}`, () => {
    for (let r = 0; r < REPS; r++) dnsPacketKeys(msg)
  })
  bench.add(`readQuery+writeBlockAnswer / ${name}`, () => {
    for (let r = 0; r < REPS; r++) {
      readQuery(msg, scratch)
      sink += writeBlockAnswer(msg, scratch, out, block)
    }
  })
  bench.add(`dns-packet decode+encode block / ${name}`, () => {
    for (let r = 0; r < REPS; r++) dnsPacketBlock(msg)
  })
}

await bench.run()
console.log(`node ${process.version}, ${time} ms per task, ${REPS} calls per sample; ns per call`)
console.table(
  bench.tasks.map((task) => {
    const r = task.result
    if (r.state !== 'completed') return { task: task.name, state: r.state }
    return {
      task: task.name,
      'mean ns': Math.round((r.latency.mean * 1e6) / REPS),
      'p50 ns': Math.round((r.latency.p50 * 1e6) / REPS),
      'calls/s': Math.round((REPS * 1000) / r.latency.mean),
      samples: r.latency.samplesCount,
      'rme %': Number(r.latency.rme.toFixed(1))
    }
  })
)
if (sink === 42) console.log('') // keeps `sink` observable so nothing is optimised away
