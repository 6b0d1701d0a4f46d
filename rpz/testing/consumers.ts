/**
 * Real RPZ consumers as child processes for the interop tests: BIND 9 (`named`, response-policy
 * over secondary zones) and Unbound (`rpz:` with `primary:`), both forwarding everything else to a
 * stub resolver that answers every name with one address.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'

export interface Consumer {
  port: number
  proc: ChildProcess
  output(): string
}

function startChild(t: TestContext, cmd: string, args: string[], port: number): Consumer {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
  t.after(async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const done = once(proc, 'exit')
    proc.kill('SIGTERM')
    await done
  })
  return { port, proc, output: () => output }
}

/** A zone a consumer transfers from another primary than filterd (an RPZ feed), at `index` in its zone order. */
export interface ForeignZone {
  zone: string
  port: number
  index: number
}

/** A zone BIND serves as the primary (an RPZ feed that filterd takes in): its file, NOTIFY sent to `notify`. */
export interface PrimaryZone {
  zone: string
  file: string
  notify: readonly number[]
}

/** The consumer's zones in order, each with the port of its primary. */
function zoneOrder(
  zones: readonly string[],
  primaryPort: number,
  foreign: readonly ForeignZone[] = []
): Array<{ zone: string; port: number }> {
  const order = zones.map((zone) => ({ zone, port: primaryPort }))
  for (const f of foreign) order.splice(f.index, 0, { zone: f.zone, port: f.port })
  return order
}

export interface BindOptions {
  dir: string
  port: number
  primaryPort: number
  zones: readonly string[]
  forwarder: number
  tsig?: { name: string; secret: string }
  /** Served as the primary, and enforced too (in `zones`' order, at its `index`). */
  primary?: PrimaryZone & { index: number }
}

/** `named -g` as a recursive resolver with the zones as secondaries of filterd, in response-policy order. */
export function startBind(t: TestContext, o: BindOptions): Consumer {
  const key = o.tsig === undefined ? '' : ` key "${o.tsig.name}"`
  const order = o.zones.slice()
  if (o.primary !== undefined) order.splice(o.primary.index, 0, o.primary.zone)
  const conf =
    `options {\n  directory "${o.dir}";\n  pid-file "${join(o.dir, 'named.pid')}";\n` +
    `  listen-on port ${o.port} { 127.0.0.1; };\n  listen-on-v6 { none; };\n` +
    `  recursion yes;\n  allow-query { any; };\n  allow-recursion { any; };\n  dnssec-validation no;\n` +
    `  forwarders { 127.0.0.1 port ${o.forwarder}; };\n  forward only;\n  notify no;\n` +
    // min-update-interval 0: BIND otherwise defers applying a new zone version up to 60 s after the last.
    `  response-policy { ${order.map((z) => `zone "${z}" min-update-interval 0;`).join(' ')} } qname-wait-recurse no;\n};\n` +
    (o.tsig === undefined ? '' : `key "${o.tsig.name}" { algorithm hmac-sha256; secret "${o.tsig.secret}"; };\n`) +
    `controls { };\n` +
    o.zones
      .map(
        (z) =>
          `zone "${z}" { type secondary; primaries { 127.0.0.1 port ${o.primaryPort}${key}; }; file "${z}.db"; allow-transfer { any; }; };\n`
      )
      .join('') +
    (o.primary === undefined
      ? ''
      : // ixfr-from-differences: a reload keeps the difference in the journal, so a secondary takes an IXFR.
        `zone "${o.primary.zone}" { type primary; file "${o.primary.file}"; allow-transfer { any; }; ixfr-from-differences yes; ` +
        `notify explicit; also-notify { ${o.primary.notify.map((p) => `127.0.0.1 port ${p};`).join(' ')} }; };\n`)
  const file = join(o.dir, 'named.conf')
  writeFileSync(file, conf)
  return startChild(t, 'named', ['-g', '-c', file, '-n', '1'], o.port)
}

export interface UnboundOptions {
  dir: string
  port: number
  primaryPort: number
  zones: readonly string[]
  forwarder: number
  foreign?: readonly ForeignZone[]
}

/** `unbound -d` with one `rpz:` clause per zone, each transferred from filterd (`primary:`). */
export function startUnbound(t: TestContext, o: UnboundOptions): Consumer {
  const conf =
    `server:\n  interface: 127.0.0.1\n  port: ${o.port}\n  do-ip6: no\n  chroot: ""\n  username: ""\n` +
    `  directory: "${o.dir}"\n  pidfile: "${join(o.dir, 'unbound.pid')}"\n  use-syslog: no\n  logfile: ""\n` +
    `  module-config: "respip iterator"\n  access-control: 127.0.0.0/8 allow\n  do-not-query-localhost: no\n` +
    `  verbosity: 1\n  local-zone: "test." nodefault\n  num-threads: 1\n  outgoing-range: 64\n  so-reuseport: no\n\n` +
    `remote-control:\n  control-enable: no\n\n` +
    `forward-zone:\n  name: "."\n  forward-addr: 127.0.0.1@${o.forwarder}\n\n` +
    zoneOrder(o.zones, o.primaryPort, o.foreign)
      .map(
        ({ zone, port }) =>
          `rpz:\n  name: "${zone}"\n  primary: 127.0.0.1@${port}\n  zonefile: "${join(o.dir, zone + '.zone')}"\n\n`
      )
      .join('')
  const file = join(o.dir, 'unbound.conf')
  writeFileSync(file, conf)
  return startChild(t, 'unbound', ['-d', '-c', file], o.port)
}

export interface PdnsOptions {
  dir: string
  port: number
  primaryPort: number
  zones: readonly string[]
  forwarder: number
  tsig?: { name: string; secret: string }
  /** Transferred without TSIG. */
  foreign?: readonly ForeignZone[]
}

/**
 * `pdns_recursor` (PowerDNS Recursor 4.8) with one `rpzPrimary` per zone, in order, forwarding
 * everything else to the stub. `refresh=1` polls the SOA every second: the Recursor takes NOTIFY
 * only for its own forward and auth zones, not for RPZ.
 */
export function startPdnsRecursor(t: TestContext, o: PdnsOptions): Consumer {
  const tsig =
    o.tsig === undefined ? '' : `, tsigname="${o.tsig.name}", tsigalgo="hmac-sha256", tsigsecret="${o.tsig.secret}"`
  const lua = zoneOrder(o.zones, o.primaryPort, o.foreign)
    .map(
      ({ zone, port }) =>
        `rpzPrimary("127.0.0.1:${port}", "${zone}", {refresh=1${port === o.primaryPort ? tsig : ''}})\n`
    )
    .join('')
  writeFileSync(join(o.dir, 'rpz.lua'), lua)
  const conf = [
    `local-address=127.0.0.1`,
    `local-port=${o.port}`,
    `socket-dir=${o.dir}`,
    `lua-config-file=${join(o.dir, 'rpz.lua')}`,
    `forward-zones-recurse=.=127.0.0.1:${o.forwarder}`,
    `dont-query=`,
    `allow-from=127.0.0.0/8`,
    `daemon=no`,
    `write-pid=no`,
    `disable-syslog=yes`,
    `loglevel=6`,
    `threads=1`,
    `dnssec=off`,
    `security-poll-suffix=`,
    `max-cache-ttl=1`
  ].join('\n')
  writeFileSync(join(o.dir, 'recursor.conf'), conf + '\n')
  return startChild(t, 'pdns_recursor', [`--config-dir=${o.dir}`], o.port)
}
