/*
 * The encrypted transports of one front process, wired from the config: the DoT front (a TcpFront
 * over TLS, ./dot-front.ts), the DoH front (./doh-front.ts), the certificate they share
 * (engine/tls/certificates.ts, followed on file change and SIGHUP) and their counters for /metrics.
 * Every query they take goes to the same dispatcher as port 53's.
 */
import type { Config } from '../engine/config/index.js'
import { formatHostPort, parseHostPort, DOH_HTTP_PORT, DOH_PORT, DOT_PORT } from '../engine/config/index.js'
import { EngineError } from '../engine/errors.js'
import type { Logger } from '../engine/log/index.js'
import { compileAddressSet } from '../engine/net/index.js'
import { CertificateSource } from '../engine/tls/index.js'
import type { CertificateExpiry } from '../engine/tls/index.js'
import { DohFront } from './doh-front.js'
import { TcpFront } from './tcp-front.js'
import { TransportCounters } from './transport-counters.js'
import type { QueryHandler } from './udp-front.js'

/** The bound ports of each transport, in `proxy.*-listen` order (port 0 in the config: the kernel's). */
export interface TransportPorts {
  readonly dot: readonly number[]
  readonly doh: readonly number[]
  readonly dohHttp: readonly number[]
}

export interface EncryptedFronts {
  readonly ports: TransportPorts
  readonly endpoints: readonly string[]
  readonly counters: readonly TransportCounters[]
  /** Reads the certificate files again (SIGHUP); false when the new pair was refused. */
  reloadCertificate(): boolean
  /** Serves the pair of new `proxy.tls-cert` / `tls-key` paths; throws (keeping the current pair) when it does not load. */
  setCertificateFiles(files: { cert: string; key: string }): void
  /** When the certificate served now expires, per TLS transport that listens (dot, doh). */
  certificates(): CertificateExpiry[]
  close(): Promise<void>
}

/** What both fronts hand every query to, and how they log and frame it. */
interface FrontWiring {
  readonly onQuery: QueryHandler
  readonly logger: Logger
  readonly maxFrame: number
}

/** The counters for /metrics of each transport. */
interface FrontCounters {
  readonly dot: TransportCounters
  readonly doh: TransportCounters
  readonly http: TransportCounters
}

/** The DoT front: port 53's TCP framing and limits, over TLS with the shared certificate. */
function dotFront(
  p: Config['proxy'],
  certificates: CertificateSource | null,
  wiring: FrontWiring,
  counters: TransportCounters
): TcpFront {
  return new TcpFront({
    maxConnections: p['tcp-max-connections'],
    maxPerSource: p['tcp-max-per-source'],
    idleTimeoutMs: p['tcp-idle-timeout'],
    messageTimeoutMs: p['tcp-message-timeout'],
    maxFrame: wiring.maxFrame,
    logger: wiring.logger,
    onQuery: wiring.onQuery,
    counters,
    ...(certificates === null
      ? {}
      : {
          secure: {
            certificates,
            serverName: p['server-name'] ?? null,
            handshakeTimeoutMs: p['tcp-message-timeout'],
            maxHandshakes: p['tcp-max-connections'],
            maxHandshakesPerSource: p['tcp-max-per-source']
          }
        })
  })
}

/** The DoH front, for both `doh-listen` (HTTPS) and `doh-http-listen` (plain HTTP behind a proxy). */
function dohFront(
  p: Config['proxy'],
  certificates: CertificateSource | null,
  wiring: FrontWiring,
  counters: FrontCounters
): DohFront {
  return new DohFront({
    certificates,
    maxStreams: p['doh-max-streams'],
    maxConnections: p['tcp-max-connections'],
    maxPerSource: p['tcp-max-per-source'],
    idleTimeoutMs: p['tcp-idle-timeout'],
    messageTimeoutMs: p['tcp-message-timeout'],
    maxFrame: wiring.maxFrame,
    trusted: compileAddressSet(p['doh-trusted-proxies']),
    logger: wiring.logger,
    onQuery: wiring.onQuery,
    counters: counters.doh,
    httpCounters: counters.http
  })
}

/** The handle on both fronts, their ports and endpoints still empty (bindAll fills them). */
function frontsOf(
  p: Config['proxy'],
  certificates: CertificateSource | null,
  counters: FrontCounters,
  dot: TcpFront,
  doh: DohFront,
  onHup: () => void
): EncryptedFronts {
  return {
    ports: { dot: [], doh: [], dohHttp: [] },
    endpoints: [],
    counters: Object.values(counters),
    reloadCertificate: () => certificates?.reload('reload') ?? true,
    setCertificateFiles: (files) => certificates?.retarget(files),
    certificates: () => {
      if (certificates === null) return []
      const { notAfter } = certificates.current
      return (['dot', 'doh'] as const)
        .filter((t) => p[`${t}-listen`].length > 0)
        .map((listener) => ({ listener, notAfter }))
    },
    async close() {
      process.off('SIGHUP', onHup)
      certificates?.close()
      await dot.close()
      await doh.close()
    }
  }
}

/** Starts the listeners of `proxy.dot-listen`, `doh-listen` and `doh-http-listen`; null when there are none. */
export async function startEncryptedFronts(
  config: Readonly<Config>,
  onQuery: QueryHandler,
  logger: Logger,
  maxFrame: number
): Promise<EncryptedFronts | null> {
  const p = config.proxy
  if (p['dot-listen'].length + p['doh-listen'].length + p['doh-http-listen'].length === 0) return null
  const tls = p['dot-listen'].length + p['doh-listen'].length > 0
  const certificates = tls ? new CertificateSource({ cert: p['tls-cert']!, key: p['tls-key']! }, logger) : null
  certificates?.watch()
  const counters: FrontCounters = {
    dot: new TransportCounters('dot'),
    doh: new TransportCounters('doh'),
    http: new TransportCounters('doh-http')
  }
  const wiring: FrontWiring = { onQuery, logger, maxFrame }
  const dot = dotFront(p, certificates, wiring, counters.dot)
  const doh = dohFront(p, certificates, wiring, counters)
  const onHup = (): void => {
    certificates?.reload('SIGHUP')
  }
  const fronts = frontsOf(p, certificates, counters, dot, doh, onHup)
  try {
    await bindAll(p, fronts, dot, doh)
  } catch (err) {
    await fronts.close()
    throw err
  }
  process.on('SIGHUP', onHup)
  return fronts
}

// Binds every listener of the three keys, noting ports and endpoints.
async function bindAll(p: Config['proxy'], f: EncryptedFronts, dot: TcpFront, doh: DohFront): Promise<void> {
  const ports = f.ports as { dot: number[]; doh: number[]; dohHttp: number[] }
  const endpoints = f.endpoints as string[]
  const lists = [
    ['dot-listen', DOT_PORT, 'dot', 'dns dot'],
    ['doh-listen', DOH_PORT, 'doh', 'dns doh https'],
    ['doh-http-listen', DOH_HTTP_PORT, 'dohHttp', 'dns doh http']
  ] as const
  for (const [key, defaultPort, name, label] of lists) {
    for (const text of p[key]) {
      const hp = parseHostPort(text, defaultPort)
      let port: number
      try {
        if (name === 'dot') port = await dot.listen(hp.host, hp.port, hp.family)
        else if (name === 'doh') port = await doh.listenTls(hp.host, hp.port, hp.family)
        else port = await doh.listenHttp(hp.host, hp.port, hp.family)
      } catch (err) {
        throw new EngineError(
          'ENGINE_LISTEN',
          `dns: cannot listen on proxy.${key} ${text}: ${(err as Error).message}`,
          {
            cause: err
          }
        )
      }
      ports[name].push(port)
      endpoints.push(`${label} ${formatHostPort({ host: hp.host, port })}${name === 'dot' ? '' : ' (/dns-query)'}`)
    }
  }
}
