/**
 * A role that cannot bind says so in one JSON line on stderr, code ENGINE_LISTEN, naming the address and
 * the reason, on every listening path: a uWS role (uWS itself gives no reason), the DNS server's native
 * UDP I/O (one process or several) and its node:dgram I/O; and a port below 1024 that the user may not
 * bind gets the capability hint. (The node:http path: cli.test.ts.)
 */
import { test, type TestContext } from 'node:test'
import { execFile, execFileSync } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeTaxonomy } from '../../api/testing/fixtures.js'
import { loadUdpAddon } from '../../engine/udp/index.js'
import { startFailureLine } from '../../engine/testing/daemon.js'
import { tempDir } from '../../engine/testing/temp.js'
import { needsUws } from '../../engine/testing/uws.js'

const cli = fileURLToPath(new URL('../filterd.js', import.meta.url))

/** Runs `filterd ROLE --config FILE` (as `user` via setpriv when given) and returns its exit code and stderr. */
function start(role: string, config: string, asUid?: number): Promise<{ code: number; stderr: string }> {
  const [file, args] =
    asUid === undefined
      ? [process.execPath, [cli, role, '--config', config]]
      : [
          'setpriv',
          [`--reuid=${asUid}`, `--regid=${asUid}`, '--clear-groups', process.execPath, cli, role, '--config', config]
        ]
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 20_000 }, (err, _stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stderr })
    })
  })
}

async function heldTcpPort(t: TestContext): Promise<number> {
  const holder = createServer()
  holder.listen(0, '127.0.0.1')
  await once(holder, 'listening')
  t.after(() => {
    holder.close()
  })
  return (holder.address() as { port: number }).port
}

async function heldUdpPort(t: TestContext): Promise<number> {
  const holder = createSocket('udp4')
  holder.bind(0, '127.0.0.1')
  await once(holder, 'listening')
  t.after(() => {
    holder.close()
  })
  return holder.address().port
}

function collectorConfig(dir: string, port: number): string {
  const file = join(dir, 'collector.yaml')
  writeFileSync(
    file,
    [
      'common:',
      `  db: ${join(dir, 'db')}`,
      '  http-server: uws',
      'collector:',
      `  listen: 127.0.0.1:${port}`,
      `  db: ${join(dir, 'collector')}`,
      `  snapshots: ${join(dir, 'snapshots')}`,
      `  pid: ${join(dir, 'collector.pid')}`,
      '  log: "-"'
    ].join('\n')
  )
  return file
}

function dnsConfig(dir: string, port: number, io: string, processes = 1): string {
  const file = join(dir, `dns-${io}-${processes}.yaml`)
  writeFileSync(
    file,
    [
      'common:',
      `  db: ${join(dir, 'db')}`,
      'stats:',
      `  dir: ${join(dir, 'stats')}`,
      `  db: ${join(dir, 'statsdb')}`,
      'proxy:',
      `  listen: ["127.0.0.1:${port}"]`,
      `  io: ${io}`,
      `  processes: ${processes}`,
      `  pid: ${join(dir, 'dns.pid')}`,
      '  log: "-"'
    ].join('\n')
  )
  return file
}

function assertOneLine(
  t: TestContext,
  result: { code: number; stderr: string },
  role: string,
  address: string,
  reason: RegExp
): void {
  t.assert.strictEqual(result.code, 1, result.stderr)
  const line = startFailureLine(result.stderr)
  t.assert.strictEqual(line.err.code, 'ENGINE_LISTEN', result.stderr)
  const escaped = address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  t.assert.match(line.msg ?? '', new RegExp(`^filterd: ${role}: cannot listen on ${escaped}: ${reason.source}`))
}

const nativeUdp = (): { skip: string | false } => {
  const addon = loadUdpAddon()
  return { skip: addon instanceof Error ? addon.message : false }
}

test(
  'a uWS role on a port in use says so in one line naming the address and the reason',
  needsUws(),
  async (t: TestContext) => {
    const dir = tempDir(t, 'filterd-bind-')
    const port = await heldTcpPort(t)
    assertOneLine(
      t,
      await start('collector', collectorConfig(dir, port)),
      'collector',
      `127.0.0.1:${port}`,
      /address already in use/
    )
  }
)

for (const [io, processes] of [
  ['native', 1],
  ['native', 2],
  ['dgram', 1]
] as const) {
  test(
    `the DNS role (io ${io}, ${processes} process${processes > 1 ? 'es' : ''}) on a UDP port in use says so in one line naming the address`,
    io === 'native' ? nativeUdp() : {},
    async (t: TestContext) => {
      const dir = tempDir(t, 'filterd-bind-')
      const port = await heldUdpPort(t)
      assertOneLine(
        t,
        await start('dns', dnsConfig(dir, port, io, processes)),
        'dns',
        `127.0.0.1:${port}`,
        /address already in use/
      )
    }
  )
}

/** Why a port below 1024 cannot be shown refused to an unprivileged user here, or false. */
function unprivilegedSkip(): string | false {
  let first = 1024
  try {
    first = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim())
  } catch {
    /* not Linux: the classic 1024 */
  }
  if (first <= 1) return `every port is unprivileged here (net.ipv4.ip_unprivileged_port_start=${first})`
  if (process.getuid?.() !== 0) return 'needs root, to start the role as the unprivileged user 65534 with setpriv'
  if (!existsSync('/usr/bin/setpriv') && !existsSync('/bin/setpriv'))
    return 'needs setpriv (util-linux) to run the role as an unprivileged user'
  try {
    execFileSync(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        '-e',
        `require('fs').accessSync(${JSON.stringify(cli)})`
      ],
      { stdio: 'ignore' }
    )
  } catch {
    return `the unprivileged user 65534 cannot read ${cli}`
  }
  return false
}

test(
  'a port below 1024 that the user may not bind gets the capability hint, on node:http, uWS and the DNS server',
  { skip: unprivilegedSkip() },
  async (t: TestContext) => {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim())
    const port = Math.min(first, 1024) - 1 // privileged; the kernel refuses it before asking whether it is free
    const dir = tempDir(t, 'filterd-bind-')
    chownSync(dir, 65534, 65534)
    const hint = /permission denied: ports below 1024 need root or CAP_NET_BIND_SERVICE/
    const cases: Array<[string, string]> = [['dns', dnsConfig(dir, port, 'dgram')]]
    if (!(loadUdpAddon() instanceof Error)) cases.push(['dns', dnsConfig(dir, port, 'native')])
    if (needsUws().skip === false) cases.push(['collector', collectorConfig(dir, port)])
    const api = join(dir, 'api.yaml')
    writeTaxonomy(join(dir, 'cats'))
    writeFileSync(
      api,
      [
        'datafiles:',
        `  cats: ${join(dir, 'cats')}`,
        'common:',
        `  db: ${join(dir, 'db')}`,
        'stats:',
        `  dir: ${join(dir, 'stats')}`,
        `  db: ${join(dir, 'statsdb')}`,
        'api:',
        `  listen: 127.0.0.1:${port}`,
        `  pid: ${join(dir, 'api.pid')}`,
        '  log: "-"'
      ].join('\n')
    )
    cases.push(['api', api])
    for (const [role, config] of cases) {
      assertOneLine(t, await start(role, config, 65534), role, `127.0.0.1:${port}`, hint)
    }
  }
)
