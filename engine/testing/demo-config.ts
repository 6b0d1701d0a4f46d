/**
 * The shipped demo configuration (conf/demo.yaml), moved to free ports and a test's own folder, for
 * tests that run `filterd all` as a new user would. Not a test file.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import type { Readable } from 'node:stream'
import type { TestContext } from 'node:test'
import { join } from 'node:path'
import { releasedPort } from './ports.js'
import { CONF, FILTERD } from './daemon.js'
import { ROLE_NAMES } from '../config/roles.js'

/**
 * The listeners the demo config names, by the key `demoConfig` gives their free port under: each
 * role's own, plus the upstream stub, catapi's anonymous listener, the DNS role's metrics, DoT and DoH.
 */
const DEMO_PORTS = [...ROLE_NAMES, 'upstream', 'anon', 'dnsMetrics', 'dot', 'doh'] as const

/** Free ports for the demo's listeners, plus any `extra` keys. */
export async function demoPorts(extra: readonly string[] = []): Promise<Record<string, number>> {
  const ports: Record<string, number> = {}
  for (const k of [...DEMO_PORTS, ...extra]) ports[k] = await releasedPort()
  return ports
}

/** conf/demo.yaml's text with its data under `dir` and its listeners on `ports` (see demoPorts). */
export function demoConfig(dir: string, ports: Record<string, number>): string {
  return readFileSync(join(CONF, 'demo.yaml'), 'utf8')
    .replaceAll('${CONFIG_DIR}/../var', dir)
    .replaceAll('${CONFIG_DIR}', CONF)
    .replaceAll('127.0.0.1:5354', `127.0.0.1:${ports.upstream}`)
    .replace('- 127.0.0.1:5300\n    - "[::1]:5300"', `- 127.0.0.1:${ports.dns}`)
    .replace('127.0.0.1:8080', `127.0.0.1:${ports.blockpage}`)
    .replace('127.0.0.1:8081', `127.0.0.1:${ports.api}`)
    .replace('127.0.0.1:8082', `127.0.0.1:${ports.catapi}`)
    .replace('127.0.0.1:8083', `127.0.0.1:${ports.anon}`)
    .replace('127.0.0.1:8084', `127.0.0.1:${ports.local}`)
    .replaceAll('127.0.0.1:8090', `127.0.0.1:${ports.collector}`)
    .replace('127.0.0.1:8095', `127.0.0.1:${ports.sync}`)
    .replace('127.0.0.1:8086', `127.0.0.1:${ports.dnsMetrics}`)
    .replace('127.0.0.1:8853', `127.0.0.1:${ports.dot}`)
    .replace('127.0.0.1:8443', `127.0.0.1:${ports.doh}`)
}

/** `filterd all` on a config file, as a child process. */
export interface DemoSystem {
  readonly child: ChildProcessByStdio<null, Readable, Readable>
  /** Everything it wrote on standard output so far. */
  output(): string
}

/**
 * Starts `filterd all --config config` and resolves once it printed that every role runs ("Stop with
 * Ctrl-C."); it is killed when the test ends. Rejects with its output when it exits before. `env`: added
 * to this process's environment.
 */
export async function startDemo(t: TestContext, config: string, env: NodeJS.ProcessEnv = {}): Promise<DemoSystem> {
  const child = spawn(process.execPath, [FILTERD, 'all', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env }
  })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d
  })
  child.stderr.resume()
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  while (!out.includes('Stop with Ctrl-C.')) {
    if (child.exitCode !== null) throw new Error(`filterd all exited early:\n${out}`)
    await once(child.stdout, 'data')
  }
  return { child, output: () => out }
}
