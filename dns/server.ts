/*
 * The filtering DNS server of one front process (docs/contract.md, "The shape of the DNS path"; docs/dns.md): the UDP
 * fronts (./udp-front.ts), the TCP front (./tcp-front.ts), the dispatcher (./dispatch.ts: inline
 * judging or the Piscina pool, then answer, forward or safe video) and the forwarder
 * (./upstream.ts), wired together and closed together.
 */
import type { Config } from '../engine/config/index.js'
import { formatHostPort, parseHostPort, encryptedListenerCount } from '../engine/config/index.js'
import { EngineError } from '../engine/errors.js'
import { silentLogger, type Logger } from '../engine/log/index.js'
import { createPolicy, type Policy, type SafeHosts } from '../engine/policy/index.js'
import { storedFeedsFromConfig } from '../engine/rpz-feeds/index.js'
import { DnsMetrics, type UdpDrops } from './metrics.js'
import { JudgePool } from '../engine/pool/index.js'
import { noopQueryLogSink, type QueryLogSink } from '../engine/querylog/index.js'
import {
  ClientIdMemory,
  configuredStoreOptions,
  createStoreIfMissing,
  openConfiguredStore,
  type Store
} from '../engine/store/index.js'
import {
  Judge,
  compileBlockAnswers,
  ddrEndpointsFromConfig,
  localAnswersFor,
  type DdrEndpoints
} from '../engine/judge/index.js'
import { Dispatcher } from './dispatch.js'
import type { Peer } from './peer.js'
import { TcpFront, MAX_TCP_QUERY_FRAME } from './tcp-front.js'
import { RateLimiter } from './rate-limit.js'
import { UdpFront } from './udp-front.js'
import { NativeUdpFront } from './native-udp-front.js'
import { createDnstapTap, type DnstapTap } from './dnstap-sink.js'
import { Forwarder } from './upstream.js'
import { loadUdpAddon } from '../engine/udp/index.js'
import { startEncryptedFronts, type EncryptedFronts, type TransportPorts } from './encrypted-fronts.js'

export interface DnsServerOptions {
  config: Readonly<Config>
  logger?: Logger
  /** Statistics sink; defaults to the no-op sink (statistics off). */
  querylog?: QueryLogSink
  /** An open store to share (tests); by default `common.db` is opened read-only. */
  store?: Store
  safeHosts?: SafeHosts
  /** Largest TCP frame accepted (default MAX_TCP_QUERY_FRAME). */
  tcpMaxFrame?: number
  /** Operational counters (./metrics.ts); by default a private set nobody publishes. */
  metrics?: DnsMetrics
  /**
   * The encrypted endpoints DDR answers name (engine/judge/local-answers.ts); by default those of the
   * config (`ddrEndpointsFromConfig`: none until the DoT/DoH listeners are configured).
   */
  ddr?: DdrEndpoints | null
}

/** One bound `proxy.listen` address. With port 0, UDP and TCP get the same free port. */
export interface DnsListener {
  readonly host: string
  readonly family: 4 | 6
  readonly port: number
  /** The UDP socket's receive buffer as the kernel set it (it doubles the request, capped by net.core.rmem_max). */
  readonly udpReceiveBuffer: number
}

export interface DnsServer {
  readonly listeners: readonly DnsListener[]
  /** Port of the first listener (UDP and TCP). */
  readonly port: number
  readonly endpoints: readonly string[]
  readonly dispatch: 'inline' | 'pool'
  /** The UDP I/O path in use (`proxy.io` resolved). */
  readonly io: UdpIo
  /** The bound ports of the DoT and DoH listeners (./encrypted-fronts.ts). */
  readonly transports: TransportPorts
  /** Applies a config reload's live keys (`dnscache.forward`, `proxy.rate-limit*`; engine/config/reload.ts). */
  reload(config: Readonly<Config>, keys: readonly string[]): Promise<void>
  /** The policy generation of the store this process reads (undefined with `dispatch: pool`, whose workers read it). */
  generation(): number | undefined
  /**
   * Hands one query to the dispatcher as a front does: for fronts built outside this module and for tests
   * that bring their own Peer (a client ID, a channel of their own).
   */
  submit(msg: Buffer, peer: Peer): void
  close(): Promise<void>
}

export type UdpIo = 'native' | 'dgram'

/**
 * Resolves `proxy.io`: `native` needs the addon (else a config error naming the key), `auto`
 * takes it when it loads and otherwise warns once (one JSON log line) and uses node:dgram.
 */
export function chooseUdpIo(setting: 'auto' | 'native' | 'dgram', logger: Logger): UdpIo {
  if (setting === 'dgram') return 'dgram'
  const addon = loadUdpAddon()
  if (!(addon instanceof Error)) return 'native'
  if (setting === 'native') throw new EngineError('ENGINE_CONFIG_INVALID', `proxy.io: native, but ${addon.message}`)
  logger.warn({ io: 'dgram', reason: addon.message }, 'dns: proxy.io auto: using node:dgram')
  return 'dgram'
}

class FrontProcessServer implements DnsServer {
  readonly listeners: DnsListener[] = []
  readonly endpoints: string[] = []
  readonly dispatch: 'inline' | 'pool'
  io: UdpIo = 'dgram'
  private readonly config: Readonly<Config>
  private readonly logger: Logger
  private readonly sink: QueryLogSink
  private readonly metrics: DnsMetrics
  private readonly tcpMaxFrame: number
  private store: Store | null = null
  private ownsStore = false
  /** With `pool` dispatch and feeds: the store this process opened to read the feeds' state for /metrics. */
  private feedStore: Store | null = null
  private pool: JudgePool | null = null
  private policy: Policy | null = null
  private forwarder: Forwarder | null = null
  private dispatcher: Dispatcher | null = null
  private tcp: TcpFront | null = null
  private limiter: RateLimiter | null = null
  private tap: DnstapTap | null = null
  private encrypted: EncryptedFronts | null = null
  private clientIds: ClientIdMemory | null = null
  private readonly udp: Array<UdpFront | NativeUdpFront> = []
  private closed = false

  constructor(o: DnsServerOptions) {
    this.config = o.config
    this.logger = o.logger ?? silentLogger()
    this.sink = o.querylog ?? noopQueryLogSink
    this.metrics = o.metrics ?? new DnsMetrics()
    this.tcpMaxFrame = o.tcpMaxFrame ?? MAX_TCP_QUERY_FRAME
    this.dispatch = o.config.proxy.dispatch
  }

  get port(): number {
    return this.listeners[0]?.port ?? 0
  }

  async start(o: DnsServerOptions): Promise<void> {
    const proxy = this.config.proxy
    this.io = chooseUdpIo(proxy.io, this.logger)
    this.metrics.io = this.io
    // node:dgram's front processes read one shared socket: there is no group to steer.
    if (this.io === 'dgram' && proxy['udp-steering'] === 'address' && proxy.processes > 1)
      this.logger.warn(
        { io: 'dgram' },
        'dns: proxy.udp-steering address needs the native UDP I/O; queries are spread as by flow'
      )
    this.metrics.udpDrops = () => this.udpDropCounts()
    const tap = (this.tap = createDnstapTap(this.config, this.logger))
    if (tap !== null) this.metrics.dnstap = () => tap.counts
    const judge = await this.startJudging(o, tap !== null)
    this.limiter =
      proxy['rate-limit'] > 0
        ? new RateLimiter(proxy['rate-limit'], proxy['rate-limit-prefix-v4'], proxy['rate-limit-prefix-v6'])
        : null
    this.forwarder = await Forwarder.create({
      resolvers: this.config.dnscache.forward.map((r) => parseHostPort(r, 53)),
      timeoutMs: proxy['upstream-timeout'],
      io: this.io,
      logger: this.logger,
      metrics: this.metrics
    })
    const forwarder = this.forwarder
    this.metrics.resolvers = () => forwarder.resolverSnapshots()
    this.metrics.upstreamPending = () => forwarder.pending
    // Client IDs come over DoT and DoH only: without those listeners there is nothing to remember.
    if (encryptedListenerCount(proxy) > 0)
      this.clientIds = ClientIdMemory.open(o.store?.path ?? this.config.common.db, { lifetimeSeconds: proxy.ttl })
    const dispatcher = new Dispatcher({
      judge,
      forwarder,
      pool: this.pool,
      batchSize: proxy['batch-size'],
      sink: this.sink,
      metrics: this.metrics,
      logger: this.logger,
      limiter: this.limiter,
      limitAction: proxy['rate-limit-action'],
      truncateAnyOverUdp: proxy['any-over-udp'] === 'truncate',
      tap,
      upstreamEdnsSize: proxy['upstream-edns-size'],
      clientIds: this.clientIds
    })
    this.dispatcher = dispatcher
    this.tcp = new TcpFront({
      maxConnections: proxy['tcp-max-connections'],
      maxPerSource: proxy['tcp-max-per-source'],
      idleTimeoutMs: proxy['tcp-idle-timeout'],
      messageTimeoutMs: proxy['tcp-message-timeout'],
      maxFrame: this.tcpMaxFrame,
      logger: this.logger,
      onQuery: dispatcher.submit
    })
    const tcp = this.tcp
    this.metrics.tcpSlots = () => tcp.slotCounts
    for (const text of proxy.listen) await this.listen(text)
    await this.startEncrypted(dispatcher)
  }

  // DoT and DoH (./encrypted-fronts.ts), into the same dispatcher.
  private async startEncrypted(dispatcher: Dispatcher): Promise<void> {
    const encrypted = await startEncryptedFronts(this.config, dispatcher.submit, this.logger, this.tcpMaxFrame)
    this.encrypted = encrypted
    if (encrypted === null) return
    this.endpoints.push(...encrypted.endpoints)
    this.metrics.transports = () => encrypted.counters.map((c) => c.snapshot())
    this.metrics.tlsCerts = () => encrypted.certificates()
  }

  get transports(): TransportPorts {
    return this.encrypted?.ports ?? { dot: [], doh: [], dohHttp: [] }
  }

  /** The native fronts' drop counters, summed (the dgram front has none). */
  private udpDropCounts(): UdpDrops {
    let oversized = 0
    let sendDrops = 0
    for (const u of this.udp) {
      if (u instanceof NativeUdpFront) {
        oversized += u.oversized
        sendDrops += u.sendDrops
      }
    }
    return { oversized, sendDrops }
  }

  /**
   * Opens what decides queries: with `inline` dispatch the store, the policy and this thread's Judge
   * (returned); with `pool` the worker pool, which opens its own (null returned).
   */
  private async startJudging(o: DnsServerOptions, tapOn: boolean): Promise<Judge | null> {
    const proxy = this.config.proxy
    const ddr = o.ddr === undefined ? ddrEndpointsFromConfig(proxy) : o.ddr
    // A fresh host: the DNS role may start before the api role ever wrote the store.
    if (o.store === undefined && (await createStoreIfMissing(this.config))) {
      this.logger.info(
        { db: this.config.common.db },
        'created an empty store (no policy yet: every name is forwarded until the api role writes one)'
      )
    }
    if (this.dispatch !== 'inline') {
      this.pool = new JudgePool({
        workers: proxy.workers,
        data: {
          dbPath: o.store?.path ?? this.config.common.db,
          storeOptions: configuredStoreOptions(this.config),
          proxy: { ...proxy },
          vendorNames: [...this.config.common['vendor-names']],
          ddr,
          timezone: this.config.stats.timezone,
          wantStats: this.sink.enabled || tapOn,
          rpzFeeds: this.config['rpz-feeds']
        }
      })
      // The workers enforce the feeds; their state on /metrics is read here, from the same store.
      if (this.config['rpz-feeds'].feeds.length > 0) {
        const store = o.store ?? (this.feedStore = openConfiguredStore(this.config, { readOnly: true }))
        const feeds = storedFeedsFromConfig(this.config, store)
        if (feeds !== null) this.metrics.rpzFeeds = () => feeds.reports()
      }
      return null
    }
    this.store = o.store ?? openConfiguredStore(this.config, { readOnly: true })
    this.ownsStore = o.store === undefined
    // The feeds as the store holds them: the dns role's primary process follows them (./role.ts).
    const feeds = storedFeedsFromConfig(this.config, this.store)
    if (feeds !== null) this.metrics.rpzFeeds = () => feeds.reports()
    this.policy = createPolicy(this.config, this.store, {
      ...(o.safeHosts === undefined ? {} : { safeHosts: o.safeHosts }),
      feeds
    })
    const judge = new Judge({
      policy: this.policy,
      answers: compileBlockAnswers(proxy),
      clientSubnet: proxy['client-subnet'],
      wantCats: this.sink.enabled,
      local: localAnswersFor(proxy, ddr),
      unknownClientId: proxy['unknown-client-id']
    })
    this.policy.watcher.start()
    const policy = this.policy
    this.metrics.policyCache = () => ({ addresses: policy.cachedAddresses, built: policy.snapshotsBuilt })
    return judge
  }

  // UDP and TCP on the same port; with port 0 the port the kernel gave UDP may be taken for TCP.
  private async listen(text: string): Promise<void> {
    const hp = parseHostPort(text, 53)
    const dispatcher = this.dispatcher! // set in start() before listening
    for (let attempt = 0; ; attempt++) {
      let udp: UdpFront | NativeUdpFront
      try {
        udp =
          this.io === 'native'
            ? NativeUdpFront.bind(hp.host, hp.port, hp.family, dispatcher, {
                receiveBuffer: this.config.proxy['udp-receive-buffer'],
                steerSockets: this.config.proxy['udp-steering'] === 'address' ? this.config.proxy.processes : 0,
                // The policy's address is the ECS one when present: steer by the same.
                steerClientSubnet: this.config.proxy['client-subnet']
              })
            : await UdpFront.bind(
                hp.host,
                hp.port,
                hp.family,
                dispatcher.submit,
                this.logger,
                this.config.proxy['udp-receive-buffer']
              )
      } catch (err) {
        throw new EngineError('ENGINE_LISTEN', `dns: cannot bind UDP ${text}: ${(err as Error).message}`, {
          cause: err
        })
      }
      const port = udp.port
      try {
        await this.tcp!.listen(hp.host, port, hp.family)
      } catch (err) {
        udp.close()
        if (hp.port === 0 && attempt < 10) continue
        throw new EngineError('ENGINE_LISTEN', `dns: cannot listen on TCP ${text}: ${(err as Error).message}`, {
          cause: err
        })
      }
      this.udp.push(udp)
      this.listeners.push({ host: hp.host, family: hp.family, port, udpReceiveBuffer: udp.receiveBufferSize })
      const steered = udp instanceof NativeUdpFront && udp.steered ? ', steered by address' : ''
      this.endpoints.push(`dns udp+tcp ${formatHostPort({ host: hp.host, port })} (udp io ${this.io}${steered})`)
      return
    }
  }

  async reload(config: Readonly<Config>, keys: readonly string[]): Promise<void> {
    // First: a pair that does not load refuses the reload before any other key is applied.
    const { 'tls-cert': cert, 'tls-key': key } = config.proxy
    if ((keys.includes('proxy.tls-cert') || keys.includes('proxy.tls-key')) && cert !== undefined && key !== undefined)
      this.encrypted?.setCertificateFiles({ cert, key })
    if (keys.includes('dnscache.forward'))
      await this.forwarder!.reconfigure(config.dnscache.forward.map((r) => parseHostPort(r, 53)))
    if (keys.some((k) => k.startsWith('proxy.rate-limit'))) {
      const p = config.proxy
      this.limiter =
        p['rate-limit'] > 0
          ? new RateLimiter(p['rate-limit'], p['rate-limit-prefix-v4'], p['rate-limit-prefix-v6'])
          : null
      this.dispatcher!.setRateLimit(this.limiter, p['rate-limit-action'])
    }
  }

  generation(): number | undefined {
    return this.store?.generation()
  }

  submit(msg: Buffer, peer: Peer): void {
    this.dispatcher!.submit(msg, peer) // set by start(), which startDnsServer awaits before handing the server out
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.policy?.watcher.stop()
    this.dispatcher?.close()
    this.limiter?.close()
    for (const u of this.udp) u.close()
    await this.tcp?.close()
    await this.encrypted?.close()
    this.forwarder?.close()
    await this.pool?.close()
    if (this.ownsStore) await this.store?.close()
    await this.feedStore?.close()
    await this.sink.close?.()
    await this.tap?.close()
    await this.clientIds?.close()
  }
}

/**
 * Starts the filtering DNS server of one process: UDP and TCP listeners on every
 * `proxy.listen` address, the policy (inline, or a Piscina pool for `dispatch: pool`) and the
 * forwarder. Port 0 in a listen address binds a free port, the same for UDP and TCP.
 *
 * @example
 * const server = await startDnsServer({ config, store, querylog: memoryQueryLogSink() })
 * console.log(server.port)   // query 127.0.0.1:server.port over UDP or TCP
 * await server.close()
 */
export async function startDnsServer(options: DnsServerOptions): Promise<DnsServer> {
  const server = new FrontProcessServer(options)
  try {
    await server.start(options)
  } catch (err) {
    await server.close()
    throw err
  }
  return server
}
