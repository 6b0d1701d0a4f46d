/**
 * Knot DNS (Debian's knotd, a primary no one here wrote) serving one RPZ zone for the RPZ-in tests:
 * TSIG-protected transfers, the zone file reloaded by `knotc` (IXFR from its journal), and NOTIFY to
 * a filterd address when asked. Stopped when the test ends.
 */
import type { TestContext } from 'node:test'
import { spawn, execFile } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { until } from './wait.js'
import { tsigKey } from '../rpz-zones/tsig.js'

const run = promisify(execFile)

/** The key the Knot primary requires on transfers. */
export const KNOT_KEY = tsigKey('feed-key', 'hmac-sha256', Buffer.alloc(32, 0x33).toString('base64'))

export interface Knot {
  /** Writes the zone file and makes Knot reload it (then it sends its NOTIFY, when set up). */
  update(zoneText: string): Promise<void>
}

function knotConf(dir: string, zone: string, port: number, notifyPort?: number): string {
  return `server:
    listen: 127.0.0.1@${port}
    rundir: "${dir}"
control:
    listen: "${join(dir, 'knot.sock')}"
database:
    storage: "${join(dir, 'db')}"
key:
  - id: feed-key
    algorithm: hmac-sha256
    secret: ${KNOT_KEY.secret.toString('base64')}
${notifyPort === undefined ? '' : `remote:\n  - id: filterd\n    address: 127.0.0.1@${notifyPort}\n`}acl:
  - id: xfr
    key: feed-key
    action: transfer
log:
  - target: stderr
    any: info
zone:
  - domain: ${zone}
    file: "${join(dir, `${zone}.zone`)}"
    storage: "${dir}"
    acl: xfr
    zonefile-load: difference
    zonefile-sync: -1
    journal-content: changes
${notifyPort === undefined ? '' : '    notify: filterd\n'}`
}

/** Starts knotd serving `zone` (its text `zoneText`) on 127.0.0.1:`port`, NOTIFYing `notifyPort` when given. */
export async function startKnot(
  t: TestContext,
  dir: string,
  port: number,
  zone: string,
  zoneText: string,
  notifyPort?: number
): Promise<Knot> {
  mkdirSync(join(dir, 'db'))
  writeFileSync(join(dir, `${zone}.zone`), zoneText)
  writeFileSync(join(dir, 'knot.conf'), knotConf(dir, zone, port, notifyPort))
  const proc = spawn('knotd', ['-c', join(dir, 'knot.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (log += d))
  t.after(async () => {
    if (proc.exitCode !== null) return
    const done = once(proc, 'exit')
    proc.kill('SIGTERM')
    await done
  })
  await until(`knotd serves the zone (${log})`, () => /loaded, serial/.test(log), 30_000, 50)
  return {
    async update(text) {
      writeFileSync(join(dir, `${zone}.zone`), text)
      await run('knotc', ['-s', join(dir, 'knot.sock'), 'zone-reload', zone])
    }
  }
}
