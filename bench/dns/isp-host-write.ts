// Policy change at ISP size (bench/dns/isp-host.sh): WRITES management API writes, each a new name on
// one subscriber's blacklist (POST /users/s<k>/blacklist/), and for each the time until every DNS front
// process answers it blocked to that subscriber. SOCKETS UDP sockets bound to the subscriber's address,
// each on its own source port (the kernel's SO_REUSEPORT hash spreads them over the processes: with 16,
// all on one of two processes has odds of 1 in 32,768), ask every 2 ms until each has seen the block.
// Prints the p50, p99 and max from the request sent, from the API's answer (the write durable), and the
// API's answer time itself.
// Usage: node dist/bench/dns/isp-host-write.js API_PORT DNS_PORT SUBSCRIBERS [WRITES=100] [SOCKETS=16]
import { createSocket, type Socket } from 'node:dgram'
import dnsPacket from 'dns-packet'

const [apiPort = 8080, dnsPort = 53, subs = 1000, writes = 100, sockets = 16] = process.argv.slice(2).map(Number)
const BLOCK = '192.0.2.1'
const v4 = (i: number): string => `127.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`

async function bound(address: string): Promise<Socket> {
  const s = createSocket('udp4')
  await new Promise<void>((resolve) => s.bind(0, address, resolve))
  return s
}

/** Ms from `t0` until every socket has had `name` answered with the block address. */
async function enforced(socks: readonly Socket[], name: string, t0: bigint): Promise<number> {
  const seen = new Array<number>(socks.length).fill(-1)
  const query = dnsPacket.encode({
    type: 'query',
    id: 1,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name }]
  })
  const handlers = socks.map((s, i) => {
    const h = (msg: Buffer): void => {
      if (seen[i]! >= 0) return
      const answer = dnsPacket.decode(msg).answers?.find((a) => a.type === 'A')
      if (answer !== undefined && 'data' in answer && answer.data === BLOCK)
        seen[i] = Number(process.hrtime.bigint() - t0) / 1e6
    }
    s.on('message', h)
    return h
  })
  const deadline = Date.now() + 10_000
  while (seen.some((v) => v < 0) && Date.now() < deadline) {
    socks.forEach((s, i) => {
      if (seen[i]! < 0) s.send(query, dnsPort, '127.0.0.1')
    })
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  socks.forEach((s, i) => s.off('message', handlers[i]!))
  return seen.some((v) => v < 0) ? Infinity : Math.max(...seen)
}

const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!
const fromSent: number[] = []
const fromAnswer: number[] = []
const answers: number[] = []
// The first writes of a fresh api process run before V8 has compiled its write path: WARMUP of them
// are made and not counted.
const WARMUP = 10
for (let n = -WARMUP; n < writes; n++) {
  const k = Math.floor((((n + WARMUP) * 7919) % 1000) * (subs / 1000))
  const socks = await Promise.all(Array.from({ length: sockets }, async () => bound(v4(k))))
  const name = `written${n}-${Date.now()}.example`
  const t0 = process.hrtime.bigint()
  const res = await fetch(`http://127.0.0.1:${apiPort}/users/s${k}/blacklist/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([name])
  })
  if (!res.ok) throw new Error(`POST /users/s${k}/blacklist/: ${res.status} ${await res.text()}`)
  const answered = Number(process.hrtime.bigint() - t0) / 1e6
  const ms = await enforced(socks, name, t0)
  if (n >= 0) {
    fromSent.push(ms)
    fromAnswer.push(ms - answered)
    answers.push(answered)
  }
  for (const s of socks) s.close()
}
const f = (x: number): string => x.toFixed(1)
console.log(
  `policy change, ${writes} API writes (after ${WARMUP} not counted), ${sockets} source ports each: from the request p50 ${f(pct(fromSent, 50))} ms, p99 ${f(pct(fromSent, 99))} ms, max ${f(Math.max(...fromSent))} ms; from the API's answer p50 ${f(pct(fromAnswer, 50))} ms, p99 ${f(pct(fromAnswer, 99))} ms; the API's answer itself p50 ${f(pct(answers, 50))} ms, p99 ${f(pct(answers, 99))} ms`
)
