/**
 * Run by dns/unroutable.test.ts inside `unshare -n`: a network namespace of its own with only the
 * loopback interface, where 10.255.255.1 has no route (connect() fails with ENETUNREACH), as on a
 * host whose network is not up yet or that lacks the resolver's address family. It starts a stub
 * resolver and `filterd dns` forwarding to [10.255.255.1:53, the stub], asks one forwarded name and
 * prints one JSON line: `{ answer, log }` (the daemon's log: its standard output, `proxy.log: -`).
 */
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import dnsPacket from 'dns-packet'
import { startStubResolver } from '../../engine/upstream-stub/index.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { FILTERD } from '../../engine/testing/daemon.js'
import { firstA, query, setTestIo, udpAsk, writeConfigFile } from '../../engine/testing/dns.js'

execFileSync('ip', ['link', 'set', 'lo', 'up'])
const io = process.argv[2]
if (io === 'native' || io === 'dgram') setTestIo(io)
const dir = mkdtempSync(join(tmpdir(), 'filterd-unroutable-'))
const stub = await startStubResolver({ host: '127.0.0.1' })
const port = await releasedPort()
const file = writeConfigFile(
  { dir, stub },
  {
    listen: [`127.0.0.1:${port}`],
    forward: ['10.255.255.1:53', `127.0.0.1:${stub.port}`],
    proxy: { 'log-level': 'warn', 'upstream-timeout': 2000 }
  }
)
const child = spawn(process.execPath, [FILTERD, 'dns', '--config', file], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
let log = ''
child.stdout?.on('data', (d: Buffer) => {
  log += d.toString()
})
child.stderr?.on('data', (d: Buffer) => {
  log += d.toString()
})
let answer: string | null = null
try {
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => {
      if (m.type === 'ready') resolve()
    })
    child.on('exit', (code) => reject(new Error(`filterd dns exited with ${String(code)}`)))
  })
  answer = firstA(dnsPacket.decode(await udpAsk(port, query('example.org', 'A', { id: 7 })))) ?? null
} catch (err) {
  log += `\n${(err as Error).message}`
} finally {
  // The daemon closes its statistics file on SIGTERM: the folder is removed once it has exited.
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  }
  await stub.close()
  rmSync(dir, { recursive: true, force: true })
}
process.stdout.write(JSON.stringify({ answer, log }) + '\n')
