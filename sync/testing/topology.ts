/**
 * Several hosts on one machine for tests and benchmarks (not a test file): each host in its own
 * network namespace (`ip netns` + a veth pair to the root namespace, which needs root), or, where
 * namespaces cannot be created, on its own loopback address. Each host has its own folder (LMDB
 * store, statistics) and runs the sync, api and dns roles as child processes against one Redis.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CONF, FILTERD } from '../../engine/testing/daemon.js'
import { releasedPort } from '../../engine/testing/ports.js'

export interface Topology {
  /** 'netns' or 'loopback'. */
  readonly kind: 'netns' | 'loopback'
  /** Address the host's daemons listen on (reachable from the test's namespace). */
  hostAddress(i: number): string
  /** Address the test sends a host's DNS queries from (the host sees this client address). */
  clientAddress(i: number): string
  /** Address a host reaches Redis at. */
  redisAddressFor(i: number): string
  /** Addresses Redis must bind. */
  readonly redisBind: string[]
  /**
   * Address the other hosts reach host `i` at (statistics segments fetched between hosts): in
   * namespaces a second veth per host on a bridge of their own, so hosts talk with no forwarding.
   */
  peerAddress(i: number): string
  /** Command prefix that runs a process inside host `i`. */
  prefix(i: number): string[]
  cleanup(): void
}

function tryRun(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** A bridge in the root namespace and one more veth per host on it: 10.<net>.200.<i>/24 between hosts. */
function linkPeers(tag: string, net: number, hosts: number): boolean {
  const bridge = `fdb${tag}`
  if (!tryRun('ip', ['link', 'add', bridge, 'type', 'bridge']) || !tryRun('ip', ['link', 'set', bridge, 'up']))
    return false
  for (let i = 1; i <= hosts; i++) {
    const ns = `fdh${tag}-${i}`
    const [outer, inner] = [`fdp${tag}${i}`, `fdq${tag}${i}`]
    const ok =
      tryRun('ip', ['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner]) &&
      tryRun('ip', ['link', 'set', outer, 'master', bridge]) &&
      tryRun('ip', ['link', 'set', outer, 'up']) &&
      tryRun('ip', ['link', 'set', inner, 'netns', ns]) &&
      tryRun('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `10.${net}.200.${i}/24`, 'dev', inner]) &&
      tryRun('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up'])
    if (!ok) return false
  }
  return true
}

/** Whether process `pid` is running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The second octets of the 10.0.0.0/8 addresses this namespace already has: a topology left behind by a
 * test process that was killed (a cancelled test file runs no `after` hook) keeps its veths and their
 * routes, and a new topology on the same subnet would send its traffic into the old namespaces.
 */
function netsInUse(): Set<number> {
  let out = ''
  try {
    out = execFileSync('ip', ['-4', '-o', 'addr', 'show'], { encoding: 'utf8' })
  } catch {
    return new Set() // no `ip`: the loopback fallback, where 127.<net> addresses need no interface
  }
  return new Set([...out.matchAll(/inet 10\.(\d+)\./g)].map((m) => Number(m[1])))
}

/**
 * A second octet (100-199) no other test process holds: the suite runs two test files at once, and two
 * topologies on one subnet would route each other's hosts. Held by an exclusive lock file naming the
 * holder's pid, taken over from a holder that died; `release` gives it back. A subnet that still has an
 * address on this machine (a killed holder's leftovers) is skipped.
 */
function reserveNet(): { net: number; release: () => void } {
  const inUse = netsInUse()
  for (let k = 0; k < 100; k++) {
    const net = 100 + ((process.pid + k) % 100)
    if (inUse.has(net)) continue
    const lock = join(tmpdir(), `filterd-test-net-${net}`)
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' })
    } catch {
      let holder: number
      try {
        holder = Number(readFileSync(lock, 'utf8'))
      } catch {
        continue // released meanwhile: the next one
      }
      if (holder === process.pid || (holder > 0 && alive(holder))) continue
      rmSync(lock, { force: true }) // a dead holder's
      try {
        writeFileSync(lock, String(process.pid), { flag: 'wx' })
      } catch {
        continue // another process took it first
      }
    }
    return { net, release: () => rmSync(lock, { force: true }) }
  }
  throw new Error('no free test subnet: 100 topologies are held at once')
}

/** Namespaces when this process may create them, loopback addresses otherwise. */
export function createTopology(hosts: number): Topology {
  const tag = `${process.pid % 100000}`
  const { net, release } = reserveNet()
  const made: string[] = []
  const netns = ((): boolean => {
    // FILTERD_TEST_NO_NETNS=1 exercises the loopback fallback where namespaces would work.
    if (process.getuid?.() !== 0 || process.env.FILTERD_TEST_NO_NETNS === '1') return false
    for (let i = 1; i <= hosts; i++) {
      const ns = `fdh${tag}-${i}`
      const outer = `fdv${tag}${i}`
      const inner = `fdi${tag}${i}`
      if (!tryRun('ip', ['netns', 'add', ns])) return false
      made.push(ns)
      const ok =
        tryRun('ip', ['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner]) &&
        tryRun('ip', ['link', 'set', inner, 'netns', ns]) &&
        tryRun('ip', ['addr', 'add', `10.${net}.${i}.1/24`, 'dev', outer]) &&
        tryRun('ip', ['link', 'set', outer, 'up']) &&
        tryRun('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `10.${net}.${i}.2/24`, 'dev', inner]) &&
        tryRun('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up']) &&
        tryRun('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up'])
      if (!ok) return false
    }
    return linkPeers(tag, net, hosts)
  })()
  const removeNs = (): void => {
    for (const ns of made) tryRun('ip', ['netns', 'del', ns]) // deletes the veth pairs with it
    made.length = 0
    tryRun('ip', ['link', 'del', `fdb${tag}`])
  }
  if (netns) {
    return {
      kind: 'netns',
      hostAddress: (i) => `10.${net}.${i}.2`,
      clientAddress: (i) => `10.${net}.${i}.1`,
      redisAddressFor: (i) => `10.${net}.${i}.1`,
      redisBind: ['127.0.0.1', ...Array.from({ length: hosts }, (_, k) => `10.${net}.${k + 1}.1`)],
      peerAddress: (i) => `10.${net}.200.${i}`,
      prefix: (i) => ['ip', 'netns', 'exec', `fdh${tag}-${i}`],
      cleanup: () => {
        removeNs()
        release()
      }
    }
  }
  removeNs()
  return {
    kind: 'loopback',
    hostAddress: (i) => `127.${net}.${i}.2`,
    clientAddress: (i) => `127.${net}.${i}.1`,
    redisAddressFor: () => '127.0.0.1',
    redisBind: ['127.0.0.1'],
    peerAddress: (i) => `127.${net}.${i}.2`,
    prefix: () => [],
    cleanup: release
  }
}

export interface HostProcess {
  readonly role: string
  readonly proc: ChildProcess
  readonly output: string[]
  stop(): Promise<void>
}

export interface Host {
  readonly index: number
  readonly dir: string
  readonly config: string
  readonly address: string
  readonly apiUrl: string
  readonly syncUrl: string
  readonly dnsPort: number
  readonly procs: HostProcess[]
  /** Starts a role; `configFile` instead of the host's config (an api role started without Redis, say). */
  start(
    role: 'sync' | 'api' | 'dns',
    configFile?: string,
    /** Extra environment (test hooks); with `waitReady` false, returns once spawned. */
    options?: { env?: Record<string, string>; waitReady?: boolean }
  ): Promise<HostProcess>
  stop(): Promise<void>
}

/** Writes host `i`'s config and returns a handle that starts its roles. */
export async function defineHost(
  topo: Topology,
  i: number,
  root: string,
  redisPort: number,
  extra: Record<string, Record<string, unknown>> = {}
): Promise<Host> {
  const dir = join(root, `host${i}`)
  mkdirSync(dir, { recursive: true })
  const address = topo.hostAddress(i)
  const [apiPort, syncPort, dnsPort] = [await releasedPort(), await releasedPort(), await releasedPort()]
  const doc = {
    dnscache: { forward: ['127.0.0.1:9'], ...extra.dnscache },
    proxy: {
      listen: [`${address}:${dnsPort}`],
      'blockpage-ip': ['192.0.2.80'],
      log: '-',
      pid: join(dir, 'dns.pid'),
      'upstream-timeout': 300,
      ...extra.proxy
    },
    common: {
      db: join(dir, 'db'),
      'log-level': 'info',
      'redis-ip': topo.redisAddressFor(i),
      'redis-port': redisPort,
      'host-id': `host${i}`,
      'http-server': 'node',
      ...extra.common
    },
    datafiles: { path: dir, cats: CONF },
    stats: { dir: join(dir, 'stats'), db: join(dir, 'statsdb'), rotate: 1, 'import-interval': 1, ...extra.stats },
    // The test calls each host's API from outside that host (another namespace) without credentials: the
    // address alone decides, as api.require-credentials: false makes it. The credential check is tested in api/.
    api: {
      listen: `${address}:${apiPort}`,
      log: '-',
      pid: join(dir, 'api.pid'),
      'require-credentials': false,
      ...extra.api
    },
    // The sync listener also serves this host's statistics segments to the other hosts (peerAddress).
    sync: {
      listen: `${topo.kind === 'netns' ? '0.0.0.0' : address}:${syncPort}`,
      'segments-url': `http://${topo.peerAddress(i)}:${syncPort}`,
      log: '-',
      pid: join(dir, 'sync.pid'),
      ...extra.sync
    },
    ...(extra.lists === undefined ? {} : { lists: extra.lists })
  }
  const config = join(dir, 'filterd.json')
  writeFileSync(config, JSON.stringify(doc))
  const procs: HostProcess[] = []
  const start = async (
    role: 'sync' | 'api' | 'dns',
    configFile = config,
    options: { env?: Record<string, string>; waitReady?: boolean } = {}
  ): Promise<HostProcess> => {
    const [cmd, ...args] = [...topo.prefix(i), process.execPath, FILTERD, role, '--config', configFile]
    const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: { ...process.env, ...options.env } })
    const output: string[] = []
    let buffered = ''
    const take = (d: string): void => {
      buffered += d
      let nl
      while ((nl = buffered.indexOf('\n')) >= 0) {
        output.push(buffered.slice(0, nl))
        buffered = buffered.slice(nl + 1)
      }
    }
    proc.stdout!.setEncoding('utf8').on('data', take)
    proc.stderr!.setEncoding('utf8').on('data', take)
    const stop = async (): Promise<void> => {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      const done = once(proc, 'exit')
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await done
      clearTimeout(timer)
    }
    const p: HostProcess = { role, proc, output, stop }
    procs.push(p)
    if (options.waitReady === false) return p
    await Promise.race([
      once(proc, 'message'),
      once(proc, 'exit').then(([code]) => {
        throw new Error(`host${i} ${role} exited with ${String(code)} before ready:\n${output.join('\n')}`)
      })
    ])
    return p
  }
  return {
    index: i,
    dir,
    config,
    address,
    apiUrl: `http://${address}:${apiPort}`,
    syncUrl: `http://${address}:${syncPort}`,
    dnsPort,
    procs,
    start,
    async stop() {
      await Promise.all(
        procs.map(async (p) => {
          await p.stop()
        })
      )
    }
  }
}
