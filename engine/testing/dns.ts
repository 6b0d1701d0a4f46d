// DNS test helpers shared by the dns role's tests and engine tests that drive a DNS daemon: temp
// worlds (store, stub upstream), configs, UDP/TCP clients (not a test file: node --test only runs
// *.test.js). Starting an in-process server is the role's own helper: dns/testing/harness.ts.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSocket } from 'node:dgram'
import { connect } from 'node:net'
import { once } from 'node:events'
import { execFile } from 'node:child_process'
import type { TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { parseConfig } from '../features.js'
import type { Config } from '../config/types.js'
import { Store } from '../store/index.js'
import { startStubResolver, type StubResolver, type StubResolverOptions } from '../upstream-stub/index.js'
import { buildCats } from './store.js'
import { tempDir as makeDir } from './temp.js'

import { query, type QueryOptions } from '../wire/testing/build.js'
export { query, rawQuery, rawOpt } from '../wire/testing/build.js'
export { addUser } from './store.js'

export const BLOCK_V4 = '192.0.2.1'
export const BLOCK_V6 = '2001:db8::b10c'

/** A temp folder (prefix `filterd-dns-`), removed after the test. */
export const tempDir = (t: TestContext, prefix = 'filterd-dns-'): string => makeDir(t, prefix)

export interface World {
  dir: string
  store: Store
  stub: StubResolver
}

/** A temp store with categories, a stub upstream (UDP+TCP) and a temp dir. */
export async function world(
  t: TestContext,
  opts: { cats?: Record<string, number[]>; stub?: StubResolverOptions } = {}
): Promise<World> {
  const dir = tempDir(t)
  const store = Store.open(join(dir, 'db'))
  t.after(async () => {
    await store.close()
  })
  if (opts.cats !== undefined) await buildCats(store, opts.cats)
  const stub = await startStubResolver({ tcp: true, ...opts.stub })
  t.after(async () => {
    await stub.close()
  })
  return { dir, store, stub }
}

export interface ConfigOptions {
  listen?: string[]
  forward?: string[]
  blockpage?: string[]
  proxy?: Record<string, unknown>
  /** Merged over the default `datafiles` section (path and cats: the world's dir). */
  datafiles?: Record<string, unknown>
  /** Further sections as they are (e.g. `rpz-feeds`). */
  sections?: Record<string, unknown>
}

let testIo: 'auto' | 'native' | 'dgram' | undefined

/** The UDP I/O path (`proxy.io`) every config made by this module asks for (default: the config's default). */
export function setTestIo(io: 'auto' | 'native' | 'dgram' | undefined): void {
  testIo = io
}

/** The config file's content: only the keys a test sets (defaults are the loader's job). */
function configDoc(w: { dir: string; stub?: StubResolver }, o: ConfigOptions): Record<string, unknown> {
  const forward = o.forward ?? [`127.0.0.1:${w.stub?.port ?? 53}`]
  const proxy: Record<string, unknown> = {
    listen: o.listen ?? ['127.0.0.1:0'],
    'blockpage-ip': o.blockpage ?? [BLOCK_V4, BLOCK_V6],
    log: '-',
    pid: join(w.dir, 'dns.pid'),
    'upstream-timeout': 300,
    ...(testIo === undefined ? {} : { io: testIo }),
    ...o.proxy
  }
  const doc = {
    dnscache: { forward },
    proxy,
    common: { db: join(w.dir, 'db'), 'log-level': 'silent' },
    datafiles: { path: w.dir, cats: w.dir, ...o.datafiles },
    stats: { dir: join(w.dir, 'stats'), db: join(w.dir, 'statsdb') },
    ...o.sections
  }
  return doc
}

export function makeConfig(w: { dir: string; stub?: StubResolver }, o: ConfigOptions = {}): Readonly<Config> {
  return parseConfig(JSON.stringify(configDoc(w, o)), join(w.dir, 'filterd.yaml'))
}

export function writeConfigFile(w: { dir: string; stub?: StubResolver }, o: ConfigOptions = {}): string {
  const file = join(w.dir, 'filterd.yaml')
  makeConfig(w, o) // refuses a bad config here, where the test is
  // JSON is YAML; written as the test set it, so the file's own keys are what an operator would write.
  writeFileSync(file, JSON.stringify(configDoc(w, o)))
  return file
}

/** Sends one UDP datagram and waits for one answer (rejects after `ms`). */
export async function udpAsk(port: number, msg: Buffer, host = '127.0.0.1', ms = 3000, from?: string): Promise<Buffer> {
  const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4')
  try {
    if (from !== undefined) {
      sock.bind(0, from)
      await once(sock, 'listening')
    }
    sock.send(msg, port, host)
    const ac = new AbortController()
    const timer = setTimeout(() => ac.abort(), ms)
    try {
      const [answer] = (await once(sock, 'message', { signal: ac.signal })) as [Buffer]
      return answer
    } finally {
      clearTimeout(timer)
    }
  } finally {
    sock.close()
  }
}

/** True when nothing comes back within `ms`. */
export async function udpSilent(port: number, msg: Buffer, ms = 300): Promise<boolean> {
  try {
    await udpAsk(port, msg, '127.0.0.1', ms)
    return false
  } catch {
    return true
  }
}

/** Asks `name` over UDP (from the source address `from`, default 127.0.0.1) and decodes the answer. */
export async function ask(
  port: number,
  name: string,
  type: dnsPacket.RecordType = 'A',
  opts: QueryOptions & { from?: string; host?: string } = {}
): Promise<dnsPacket.DecodedPacket> {
  return dnsPacket.decode(await udpAsk(port, query(name, type, opts), opts.host ?? '127.0.0.1', 3000, opts.from))
}

/** A TCP connection (from `localAddress` when given) that collects framed answers. */
export async function tcpClient(
  t: TestContext,
  port: number,
  host = '127.0.0.1',
  localAddress?: string
): Promise<{
  send: (b: Buffer) => void
  next: () => Promise<Buffer>
  closed: Promise<void>
  socket: import('node:net').Socket
}> {
  const sock = connect({ host, port, ...(localAddress === undefined ? {} : { localAddress }) })
  t.after(() => sock.destroy())
  await once(sock, 'connect')
  let buf = Buffer.alloc(0)
  const ready: Buffer[] = []
  const waiters: Array<(b: Buffer) => void> = []
  sock.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk])
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const m = buf.subarray(2, 2 + buf.readUInt16BE(0))
      buf = buf.subarray(2 + m.length)
      const w = waiters.shift()
      if (w !== undefined) w(m)
      else ready.push(m)
    }
  })
  sock.on('error', () => {})
  const closed = once(sock, 'close').then(() => {})
  return {
    socket: sock,
    send: (b) => sock.write(b),
    next: async () => {
      const r = ready.shift()
      if (r !== undefined) return r
      return await new Promise<Buffer>((resolve) => waiters.push(resolve))
    },
    closed
  }
}

export function framed(msg: Buffer): Buffer {
  const h = Buffer.alloc(2)
  h.writeUInt16BE(msg.length)
  return Buffer.concat([h, msg])
}

/** Runs dig; resolves undefined when dig is not installed. */
export async function dig(args: string[]): Promise<string | undefined> {
  return await new Promise((resolve, reject) => {
    execFile('dig', args, { timeout: 10000 }, (err, stdout) => {
      if (err !== null && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        resolve(undefined)
        return
      }
      if (err !== null) {
        const failure: Error = err
        reject(failure)
        return
      }
      resolve(stdout)
    })
  })
}

/** Skip message for dig-based cases; throws in CI so a missing dig is never silently skipped there. */
export function digMissing(t: TestContext): void {
  if (process.env.CI !== undefined && process.env.CI !== '')
    throw new Error('dig is required in CI (apt-get install bind9-dnsutils)')
  t.skip('dig is not installed (apt-get install bind9-dnsutils); skipping the dig case')
}

export function firstA(p: dnsPacket.DecodedPacket): string | undefined {
  const a = p.answers?.find((x) => x.type === 'A' || x.type === 'AAAA')
  return a === undefined ? undefined : (a as { data: string }).data
}

export function rcode(p: dnsPacket.DecodedPacket): string | undefined {
  return (p as { rcode?: string }).rcode
}

/** EDE INFO-CODE of an answer's OPT, or -1. */
export function edeOf(msg: Buffer): number {
  const p = dnsPacket.decode(msg)
  for (const a of p.additionals ?? []) {
    if (a.type !== 'OPT') continue
    for (const o of (a as { options?: Array<{ code: number; data?: Buffer }> }).options ?? []) {
      if (o.code === 15 && o.data !== undefined) return o.data.readUInt16BE(0)
    }
  }
  return -1
}

export const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, ms))
}
