/**
 * From query to report (the goal: at most 10 s, p99). Gives the user `probe` the source
 * address 127.0.0.2 through the management API, then every INTERVAL ms sends one A query for a name
 * never asked before from 127.0.0.2 to the DNS server, and polls `/users/probe/stat/raw` every 100 ms.
 * A probe's latency runs from its answer's arrival to the first poll whose rows hold its name: the
 * query log's file closing, the importer's interval and its work, and the report's own query.
 * Prints one JSON line: probes sent, seen, and p50/p90/p99/max in ms.
 *
 *   node dist/bench/stats/freshness-probe.js DNS_PORT API_URL PROBES [INTERVAL_MS=500]
 */
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import dnsPacket from 'dns-packet'

const [portArg, api, probesArg, intervalArg] = process.argv.slice(2)
if (portArg === undefined || api === undefined || probesArg === undefined) {
  console.error('usage: freshness-probe.js DNS_PORT API_URL PROBES [INTERVAL_MS]')
  process.exit(2)
}
const PORT = Number(portArg)
const PROBES = Number(probesArg)
const INTERVAL = Number(intervalArg ?? 500)
const POLL_MS = 100
const GIVE_UP_MS = 120_000

const put = await fetch(`${api}/users/probe`, {
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ ip: ['127.0.0.2'] })
})
if (!put.ok) throw new Error(`PUT /users/probe: ${put.status} ${await put.text()}`)

const socket = createSocket('udp4')
socket.bind(0, '127.0.0.2')
await once(socket, 'listening')
const answered = new Map<string, number>()
const sentAt = new Map<number, string>()
socket.on('message', (msg) => {
  const name = sentAt.get(msg.readUInt16BE(0))
  if (name !== undefined && !answered.has(name)) answered.set(name, performance.now())
})

const run = Date.now().toString(36)
const latencies = new Map<string, number>()
const poll = async (): Promise<void> => {
  const res = await fetch(`${api}/users/probe/stat/raw`)
  if (!res.ok) return
  const body = (await res.json()) as { fields: string[]; data: unknown[][] }
  const host = body.fields.indexOf('host')
  const now = performance.now()
  for (const row of body.data) {
    const name = String(row[host])
    const at = answered.get(name)
    if (at !== undefined && !latencies.has(name)) latencies.set(name, now - at)
  }
}
let polling = true
const poller = (async () => {
  while (polling) {
    await poll().catch(() => undefined)
    await new Promise((r) => setTimeout(r, POLL_MS))
  }
})()

for (let i = 0; i < PROBES; i++) {
  const name = `p${i}-${run}.fresh.example`
  const id = (i * 7919 + 1) & 0xffff
  sentAt.set(id, name)
  socket.send(dnsPacket.encode({ type: 'query', id, questions: [{ type: 'A', name }] }), PORT, '127.0.0.1')
  await new Promise((r) => setTimeout(r, INTERVAL))
}
const deadline = performance.now() + GIVE_UP_MS
while (latencies.size < answered.size && performance.now() < deadline) await new Promise((r) => setTimeout(r, 200))
polling = false
await poller
socket.close()

const sorted = [...latencies.values()].sort((a, b) => a - b)
const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN
const ms = (v: number): number => Math.round(v)
console.log(
  JSON.stringify({
    sent: PROBES,
    answered: answered.size,
    seen: sorted.length,
    p50: ms(pct(0.5)),
    p90: ms(pct(0.9)),
    p99: ms(pct(0.99)),
    max: ms(sorted[sorted.length - 1] ?? NaN)
  })
)
