/**
 * The rpz role's test world: a store in a temp folder seeded with lists, categories and a user,
 * a config file for it, the role as a child process, and the DNS tools (dig, kdig) run against it.
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { TestContext } from 'node:test'
import { Store } from '../../engine/store/index.js'
import { addUser, buildCats } from '../../engine/testing/store.js'
import { tempDir } from '../../engine/testing/temp.js'
import { releasedPort } from '../../engine/testing/ports.js'
import { startRole, type Child } from '../../engine/testing/daemon.js'

const run = promisify(execFile)

export const TSIG_NAME = 'xfr-key'
export const TSIG_SECRET = Buffer.alloc(32, 0x5a).toString('base64')
export const BLOCK_IP = '192.0.2.80'

export interface RpzWorld {
  dir: string
  store: Store
  dnsPort: number
  httpPort: number
  role: Child
}

export interface WorldOptions {
  tsig?: boolean
  notify?: number[]
  users?: boolean
  access?: string[]
  extra?: string
  /** SOA refresh (s) of the zones: 3600 unless set. */
  refresh?: number
}

/** Seeds the store: global lists, three categories, one user (disabled), and starts the role. */
export async function rpzWorld(t: TestContext, options: WorldOptions = {}): Promise<RpzWorld> {
  const dir = tempDir(t, 'filterd-rpz-')
  const store = Store.open(join(dir, 'db'))
  t.after(async () => {
    await store.close()
  })
  await buildCats(store, { 'casino.test': [7], 'poker.test': [7], 'adult.test': [12], 'news.test': [3] })
  await store.write((w) => {
    w.putList(null, 'black', ['bad.test', 'ads.good.test'])
    w.putList(null, 'white', ['good.test'])
  })
  await addUser(store, { name: 'alice', ip: ['10.1.2.3', '10.9.0.0/16'], status: 'disabled' }, { black: ['x.test'] })
  const dnsPort = await releasedPort()
  const httpPort = await releasedPort()
  const tsig =
    options.tsig === true
      ? `  tsig-keys:\n    - { name: ${TSIG_NAME}, algorithm: hmac-sha256, secret: "${TSIG_SECRET}" }\n`
      : ''
  const notify = (options.notify ?? []).map((p) => `    - 127.0.0.1:${p}\n`).join('')
  const access = (options.access ?? ['allow 127.0.0.0/8']).map((r) => `    - ${r}\n`).join('')
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    `common:\n  db: ${JSON.stringify(join(dir, 'db'))}\n` +
      `proxy:\n  blockpage-ip: [${BLOCK_IP}]\n` +
      `rpz:\n  enabled: true\n  listen: 127.0.0.1:${dnsPort}\n  metrics-listen: 127.0.0.1:${httpPort}\n` +
      `  log: "-"\n  pid: ${JSON.stringify(join(dir, 'rpz.pid'))}\n  refresh: ${options.refresh ?? 3600}\n  users: ${options.users === true}\n` +
      `  transfer-access:\n${access}` +
      (notify === '' ? '' : `  notify:\n${notify}`) +
      tsig +
      (options.extra ?? '')
  )
  const role = await startRole(t, 'rpz', file)
  return { dir, store, dnsPort, httpPort, role }
}

/** `dig` or `kdig` output (stdout), with an explicit server. */
export async function tool(cmd: 'dig' | 'kdig', args: readonly string[]): Promise<string> {
  const { stdout } = await run(cmd, [...args], { maxBuffer: 256 * 1024 * 1024, timeout: 60_000 })
  return stdout
}

/** The records of a transfer's dig/kdig output, as `owner TYPE rdata` lines (TTL and class dropped), sorted. */
export function zoneLines(output: string): string[] {
  return output
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith(';'))
    .map((l) => l.split(/\s+/))
    .filter((f) => f.length >= 5 && f[2] === 'IN')
    .map((f) => `${f[0]} ${f[3]} ${f.slice(4).join(' ')}`.toLowerCase())
    .sort()
}
