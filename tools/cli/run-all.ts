/**
 * `filterd all`: every role in one process tree, the quick start. Each role runs in its own
 * child process (as in production, where each is its own daemon), started with the same config;
 * the parent prints what is listening and how to try it, forwards SIGTERM/SIGINT and SIGHUP (a
 * config reload and log reopening in every role).
 *
 * For an ISP, DNS is the service; the statistics, the API and the console are not. So a role that
 * dies is, by default (`--on-crash restart`), started again, as systemd restarts the units of a
 * production host, and a failing role other than dns never stops the others: it is started again
 * for ever, after a backoff doubling from 200 ms to 30 s (tools/cli/role-restarts.ts), whether it
 * dies at its start (a damaged file) or later, and `filterd status` shows it as restarting with its
 * last exit. Only the dns role's own failure ends the tree: at its start, or at its
 * `MAX_DNS_RESTARTS`th restart within `DNS_RESTART_WINDOW_MS` (200 ms, doubling to 5 s, between
 * them), then with a message saying so. `--on-crash stop` stops the whole tree at the first death.
 * That supervision is tools/cli/role-tree.ts; this module is the command around it.
 */
import { formatHostPort, isRoleEnabled, parseHostPort, type Config, type RoleName } from '../../engine/config/index.js'
import { startStubResolver, type StubResolver } from '../../engine/upstream-stub/index.js'
import { EngineError } from '../../engine/errors.js'
import { ensureSelfSigned } from '../../engine/tls/index.js'
import { loadCommand, ROLE_NAMES, sectionOf } from './roles.js'
import { livePid } from './run-role.js'
import { out, RoleTree, type Child, type OnCrash } from './role-tree.js'

export type { OnCrash }

/**
 * Before binding anything (the demo's stub upstream would fail with a bare EADDRINUSE): a role whose
 * pid file names a live process means this config already runs.
 */
function refuseIfRunning(config: Readonly<Config>): void {
  for (const role of ROLE_NAMES) {
    const path = sectionOf(config, role).pid
    const pid = livePid(path, role)
    if (pid !== undefined) {
      throw new EngineError(
        'ENGINE_ALREADY_RUNNING',
        `filterd all: ENGINE_ALREADY_RUNNING: ${role} is already running with pid ${pid} (pid file ${path}); stop it first (kill ${pid}), or stop the other filterd all`
      )
    }
  }
}

/** The demo's stub upstream, when the config asks for one. */
async function startDemoUpstream(config: Readonly<Config>): Promise<StubResolver | undefined> {
  if (config.demo?.upstream === undefined) return undefined
  const hp = parseHostPort(config.demo.upstream)
  const stub = await startStubResolver({ host: hp.host, port: hp.port, tcp: true })
  out(`demo: no resolver is assumed reachable offline, so a built-in stub upstream answers on ${formatHostPort(hp)}`)
  out(
    '      (every A query gets 198.51.100.10, AAAA 2001:db8::10, *.invalid NXDOMAIN); set dnscache.forward to your resolver instead'
  )
  return stub
}

/** What `filterd all` prints once every role is ready. */
function printRunning(
  config: Readonly<Config>,
  configPath: string,
  children: readonly Child[],
  roles: readonly RoleName[]
): void {
  out('')
  out(`filterd is running (config ${configPath}). Listening:`)
  for (const c of children) for (const e of c.endpoints) out(`  ${c.role.padEnd(10)} ${e}`)
  for (const c of children)
    if (!c.ready) out(`  ${c.role.padEnd(10)} not running: restarting after failures (above; filterd status)`)
  out('')
  out('Try it:')
  for (const line of tryLines(config, roles)) out(`  ${line}`)
  out('')
  out('Stop with Ctrl-C.')
}

/** The demo's category database, built when `demo.build-db` asks and it is empty; build-db's exit code. */
async function buildDemoDb(config: Readonly<Config>, configPath: string): Promise<number> {
  if (config.demo?.['build-db'] !== true) return 0
  const buildDb = await loadCommand('build-db')
  return await buildDb(['--config', configPath, '--if-empty', '--quiet'])
}

export async function runAll(
  config: Readonly<Config>,
  configPath: string,
  onCrash: OnCrash = 'restart'
): Promise<number> {
  refuseIfRunning(config)
  const stub = await startDemoUpstream(config)
  demoCertificate(config)
  const built = await buildDemoDb(config, configPath)
  if (built !== 0) {
    await stub?.close()
    return built
  }
  const roles: RoleName[] = ROLE_NAMES.filter((r) => isRoleEnabled(config, r))
  const tree = new RoleTree({
    config,
    configPath,
    roles,
    onCrash,
    release: () => stub?.close() ?? Promise.resolve()
  })
  const ready = tree.startAll()
  process.on('SIGINT', () => tree.stopAll(0))
  process.on('SIGTERM', () => tree.stopAll(0))
  // `kill -HUP` of this process (systemctl reload, logrotate): every role reloads its config and reopens its log.
  process.on('SIGHUP', () => tree.hangUp())
  try {
    await ready
  } catch {
    tree.stopAll(1)
  }
  if (tree.isStopping) return await tree.done
  tree.markStarted()
  printRunning(config, configPath, tree.children, roles)
  return await tree.done
}

/** `demo.tls-self-signed`: the DoT/DoH certificate, made at the first start. */
function demoCertificate(config: Readonly<Config>): void {
  const p = config.proxy
  if (config.demo?.['tls-self-signed'] !== true || p['tls-cert'] === undefined || p['tls-key'] === undefined) return
  const name = p['server-name'] ?? 'localhost'
  if (ensureSelfSigned(p['tls-cert'], p['tls-key'], name))
    out(`demo: made a self-signed certificate for ${name} and *.${name} at ${p['tls-cert']}`)
}

/**
 * kdig lines for the DoT and DoH listeners (the certificate is not checked: kdig does not by default):
 * `plain` without a client ID; `withId` naming the client ID kid1, which the story gives the user demo.
 */
function encryptedTryLines(config: Readonly<Config>): { plain: string[]; withId: string[] } {
  const plain: string[] = []
  const withId: string[] = []
  const at = (text: string, port: number): string => {
    const hp = parseHostPort(text, port)
    const host = hp.host === '0.0.0.0' ? '127.0.0.1' : hp.host === '::' ? '::1' : hp.host
    return `kdig @${host} -p ${hp.port}`
  }
  const sni = config.proxy['server-name']
  const dot = config.proxy['dot-listen'][0]
  if (dot !== undefined) {
    plain.push(`${at(dot, 853)} +tls +short casino.example A   # DNS over TLS: blocked`)
    if (sni !== undefined)
      withId.push(`${at(dot, 853)} +tls-sni=kid1.${sni} +short example.org A   # DoT naming the client ID kid1 (demo)`)
  }
  const doh = config.proxy['doh-listen'][0]
  if (doh !== undefined) {
    plain.push(`${at(doh, 443)} +https +short casino.example A   # DNS over HTTPS (POST): blocked`)
    withId.push(`${at(doh, 443)} +https-get +https=/dns-query/kid1 +short example.org A   # DoH GET, client ID kid1`)
  }
  return { plain, withId }
}

/**
 * The quick start's "Try it" lines, a story to run in order: the demo's defaults block gambling for
 * every address; the pages and lookups show why; then this machine becomes the user `demo`, which
 * keeps gambling (30) blocked, and clearing its filter lets the same name through. The last lines
 * delete the user `demo` again, so the store (`common.db`, kept across runs) is back where the story
 * began and the same lines work on the next start too.
 */
export function tryLines(config: Readonly<Config>, roles: readonly RoleName[]): string[] {
  const lines: string[] = []
  const url = (addr: string): string => {
    const hp = parseHostPort(addr)
    const host = hp.host === '0.0.0.0' ? '127.0.0.1' : hp.host === '::' ? '::1' : hp.host
    return `http://${formatHostPort({ host, port: hp.port })}`
  }
  let dig: string | undefined
  const encrypted = encryptedTryLines(config)
  if (roles.includes('dns')) {
    const hp = parseHostPort(config.proxy.listen[0]!, 53)
    const host = hp.host === '0.0.0.0' ? '127.0.0.1' : hp.host === '::' ? '::1' : hp.host
    dig = `dig @${host} -p ${hp.port} +short casino.example A`
    lines.push(`${dig}   # the block page's address: the demo's defaults block gambling (category 30)`)
    lines.push(`dig @${host} -p ${hp.port} +short example.org A   # forwarded`)
    lines.push(...encrypted.plain)
  }
  if (roles.includes('blockpage'))
    lines.push(
      `curl -H 'Host: casino.example' -H 'Accept: text/html' ${url(config.blockpage.listen)}/   # the block page`
    )
  if (roles.includes('catapi'))
    lines.push(`curl ${url(config.catapi['anon-listen'])}/domain/casino.example   # its categories`)
  if (roles.includes('local')) lines.push(`curl ${url(config.local.listen)}/casino.example`)
  if (roles.includes('api')) {
    const api = url(config.api.listen)
    lines.push(`curl ${api}/categorygroups/`)
    lines.push(
      `curl -X PUT -H 'Content-Type: application/json' -d '{"ip":["127.0.0.1"],"client_ids":["kid1"],"filter":[30]}' ${api}/users/demo   # this machine is now the user demo, filtering gambling; kid1 is its client ID`
    )
    if (dig !== undefined) lines.push(`${dig}   # still blocked, now by demo's own filter`, ...encrypted.withId)
    lines.push(
      `curl -X PUT -H 'Content-Type: application/json' -d '[]' ${api}/users/demo/filter/   # demo filters nothing`
    )
    if (dig !== undefined) lines.push(`${dig}   # the real address: no longer blocked`)
    lines.push(`curl -X DELETE ${api}/users/demo   # put the demo back: this machine is anonymous again`)
    if (dig !== undefined) lines.push(`${dig}   # blocked again by the demo's defaults`)
  }
  return lines
}
