/**
 * Lone queries in the live log: after a quiet spell the DNS server's writer opens a statistics file at
 * the first row, and its rotation may close it before the live log's follower looks (engine/querylog/follow.ts).
 * Gives the user `kid` the address 127.0.0.2 through the management API, follows `/live/queries?user=kid`,
 * then TRIALS times waits a random GAP_MIN..GAP_MAX ms, sends one never-asked name from 127.0.0.2 with
 * `dig`, and waits up to 5 s for it on the stream. Prints one JSON line: trials, missed, and p50/p99/max
 * in ms from the query to its row on the stream.
 *
 *   node dist/bench/stats/live-lone.js API_URL DNS_PORT TRIALS GAP_MIN_MS GAP_MAX_MS
 */
import { execFileSync } from 'node:child_process'

const [api, port, trialsArg, gapMinArg, gapMaxArg] = process.argv.slice(2)
if (api === undefined || port === undefined || trialsArg === undefined) {
  console.error('usage: live-lone.js API_URL DNS_PORT TRIALS [GAP_MIN_MS=1100] [GAP_MAX_MS=1900]')
  process.exit(2)
}
const TRIALS = Number(trialsArg)
const GAP_MIN = Number(gapMinArg ?? 1100)
const GAP_MAX = Number(gapMaxArg ?? 1900)
const WAIT_MS = 5000
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

const put = await fetch(`${api}/users/kid`, {
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ ip: ['127.0.0.2'] })
})
if (!put.ok) throw new Error(`PUT /users/kid: ${put.status} ${await put.text()}`)

const seen = new Map<string, number>()
const abort = new AbortController()
const stream = await fetch(`${api}/live/queries?user=kid&last=0`, { signal: abort.signal })
if (!stream.ok || stream.body === null) throw new Error(`GET /live/queries: ${stream.status}`)
const body = stream.body
const reading = (async () => {
  const decoder = new TextDecoder()
  let pending = ''
  try {
    for await (const chunk of body) {
      pending += decoder.decode(chunk, { stream: true })
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const host = /"host":"([^"]+)"/.exec(pending.slice(0, nl))?.[1]
        pending = pending.slice(nl + 1)
        if (host !== undefined && !seen.has(host)) seen.set(host, performance.now())
      }
    }
  } catch {
    // aborted at the end
  }
})()
await sleep(1000)

const run = Date.now().toString(36)
const latencies: number[] = []
let missed = 0
for (let i = 0; i < TRIALS; i++) {
  await sleep(GAP_MIN + Math.random() * (GAP_MAX - GAP_MIN))
  const name = `l${i}-${run}.lone.example`
  const sent = performance.now()
  execFileSync('dig', ['@127.0.0.1', '-p', port, '-b', '127.0.0.2', '+short', '+tries=1', name, 'A'])
  while (!seen.has(name) && performance.now() - sent < WAIT_MS) await sleep(10)
  const at = seen.get(name)
  if (at === undefined) missed++
  else latencies.push(at - sent)
}
abort.abort()
await reading

latencies.sort((a, b) => a - b)
const pct = (p: number): number =>
  Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN)
console.log(JSON.stringify({ trials: TRIALS, missed, p50: pct(0.5), p99: pct(0.99), max: pct(1) }))
