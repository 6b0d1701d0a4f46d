// Anonymous RSS of one DNS process per queried address, as the ISP-host run measures it (no forced GC):
// USERS users, one 127.x address each, blocking gambling, every OWN-th with a schedule of its own; the dns
// role as a daemon (`filterd dns`, one process, dgram I/O); one query for a blocked name from each
// address (answered locally: no upstream), CONCURRENCY at a time; RssAnon (/proc/PID/status) before and
// after. Small: 20,000 addresses take a few seconds. The compiled file runs against an older build too
// (copy it into that build's dist/bench/dns/).
// Run: npm run build && node dist/bench/dns/cache-memory.js [USERS=20000] [OWN=10]
import { spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../../engine/categories/index.js'
import { CategoryDbBuilder } from '../../engine/catdb/index.js'
import type { ScheduledRule } from '../../engine/schedule/index.js'
import { Store, type UserRecord } from '../../engine/store/index.js'

const USERS = Number(process.argv[2] ?? 20_000)
const OWN = Number(process.argv[3] ?? 10)
const CONCURRENCY = 32
const PORT = 20_000 + (process.pid % 20_000)
const address = (i: number): string => `127.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`

function ownRule(j: number): ScheduledRule {
  const hhmm = (m: number): string =>
    `${String(Math.floor(m / 60) % 24).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`
  const from = j % 1380
  return {
    name: 'own',
    timezone: 'UTC',
    windows: [{ days: ['sat', 'sun'], from: hhmm(from), to: hhmm(from + 1 + (Math.floor(j / 1380) % 59)) }],
    filter: [CATEGORY.VIDEO_STREAMING]
  }
}

const dir = mkdtempSync(join(tmpdir(), 'filterd-cachemem-'))
const store = Store.open(join(dir, 'db'))
const cats = await CategoryDbBuilder.begin(store)
await cats.put('casino.example', false, [CATEGORY.GAMBLING])
await cats.commit()
for (let start = 0; start < USERS; start += 5000) {
  await store.write((w) => {
    for (let i = start; i < Math.min(USERS, start + 5000); i++) {
      const user: UserRecord = { ...store.newUser(`u${i}`), filter: [CATEGORY.GAMBLING], ip: [address(i)] }
      if (OWN > 0 && i % OWN === 0) user.schedules = [ownRule(i / OWN)]
      w.putUser(user)
      w.claimAddresses(user.name, user.ip)
    }
  })
}
await store.close()

const config = {
  dnscache: { forward: ['127.0.0.1:9'] },
  proxy: {
    listen: [`127.0.0.1:${PORT}`],
    'blockpage-ip': ['192.0.2.1', '2001:db8::b10c'],
    log: '-',
    pid: join(dir, 'dns.pid'),
    io: 'dgram',
    'policy-cache-addresses': USERS
  },
  common: { db: join(dir, 'db'), 'log-level': 'silent' },
  datafiles: { path: dir, cats: dir },
  stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb') }
}
writeFileSync(join(dir, 'filterd.yaml'), JSON.stringify(config))
const cli = fileURLToPath(new URL('../../tools/filterd.js', import.meta.url))
const child = spawn(process.execPath, [cli, 'dns', '--config', join(dir, 'filterd.yaml')], {
  stdio: ['ignore', 'ignore', 'inherit', 'ipc']
})
await new Promise<void>((resolve, reject) => {
  child.on('message', (m: { type?: string }) => {
    if (m.type === 'ready') resolve()
  })
  child.on('exit', (code) => reject(new Error(`filterd dns exited with ${String(code)}`)))
})

const rssAnon = (): number => {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
  return Number(m?.[1] ?? 0) * 1024
}

/** One query from `from`; resolves with whether a block answer came within 5 s. */
async function ask(from: string, id: number): Promise<boolean> {
  const sock = createSocket('udp4')
  await new Promise<void>((resolve) => sock.bind({ address: from, port: 0 }, resolve))
  return await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => finish(false), 5000)
    const finish = (ok: boolean): void => {
      clearTimeout(timer)
      sock.close()
      resolve(ok)
    }
    sock.on('message', (msg) => {
      const first = dnsPacket.decode(msg).answers?.[0]
      finish(first !== undefined && first.type === 'A' && first.data === '192.0.2.1')
    })
    sock.send(
      dnsPacket.encode({ type: 'query', id, questions: [{ type: 'A', name: 'casino.example' }] }),
      PORT,
      '127.0.0.1'
    )
  })
}

// A first round from a few addresses: the process's steady state before the cache fills.
for (let i = 0; i < 100; i++) await ask(address(i), i)
await new Promise((resolve) => setTimeout(resolve, 1000))
const before = rssAnon()
let next = 0
let blocked = 0
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < USERS) {
      const i = next++
      if (await ask(address(i), i & 0xffff)) blocked++
    }
  })
)
await new Promise((resolve) => setTimeout(resolve, 1000))
const after = rssAnon()
// HEAPSNAPSHOT=1 (with NODE_OPTIONS=--heapsnapshot-signal=SIGUSR2): the daemon writes a heap snapshot
// into the working folder (V8 collects first), to sum with bench/policy/heap-summary.ts.
if (process.env.HEAPSNAPSHOT !== undefined) {
  child.kill('SIGUSR2')
  await new Promise((resolve) => setTimeout(resolve, 15_000))
}
child.kill('SIGTERM')
await new Promise((resolve) => child.on('exit', resolve))
rmSync(dir, { recursive: true, force: true })
console.log(
  JSON.stringify({
    node: process.version,
    users: USERS,
    ownScheduleEvery: OWN,
    blocked,
    anonBeforeMB: +(before / 2 ** 20).toFixed(1),
    anonAfterMB: +(after / 2 ** 20).toFixed(1),
    anonPerAddress: `${((after - before) / USERS).toFixed(0)} B`
  })
)
