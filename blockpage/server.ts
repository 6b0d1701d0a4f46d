/**
 * The block page (spec component 2) and the front door to the management API on the same listener.
 *
 * A browser lands here because the DNS server answered a name with the block-page address. The page
 * does not trust that answer: it may come from a stale cache, or the policy may have changed since.
 * So every request recomputes the verdict with the DNS server's own policy code, from the socket's
 * peer address and the Host header, after one cheap generation check (so an API write is seen on the
 * next request, without restart), and answers what the verdict says now:
 *
 *   block, by category      → blocked_by_category page (`Cats` in the page's language)
 *   block, by a list        → blocked page
 *   safe search             → 302 to `safesearchredirect` (search terms kept, safesearch.ts)
 *   anything else           → unblocked page: "no longer blocked", a link to retry the URL
 *
 * Only page loads get pages: a request whose Accept does not name HTML (images, scripts, XHR, fonts)
 * gets a few bytes of text with 403 (blocked) or 503 + Retry-After (not blocked: the client's DNS
 * answer is stale), since a 10 KB page is of no use inside an <img>. Every answer says
 * `Cache-Control: no-store`: a browser must never show a block page from its cache once the block
 * is lifted. Requests for the API's host name never reach any of this: they go to the front door.
 */
import { readFileSync } from 'node:fs'
import { domainToUnicode } from 'node:url'
import { Gauge } from 'prom-client'
import { loadTaxonomy, type Taxonomy } from '../engine/categories/index.js'
import {
  formatHostPort,
  parseHostPort,
  type Config,
  type Language,
  encryptedListenerCount
} from '../engine/config/index.js'
import { EngineError } from '../engine/errors.js'
import { RoleStack } from '../engine/role.js'
import { certificateNotAfter, certificateProblems, type CertificateExpiry } from '../engine/tls/index.js'
import { createHttpMetrics, isLoopback, type HttpMetrics } from '../engine/metrics/index.js'
import { healthReport, storeGeneration, type HealthProblem, type HealthReport } from '../engine/health/index.js'
import {
  createHttpServer,
  type Handler,
  type HttpImpl,
  type HttpRequest,
  type HttpResponse,
  type HttpServer
} from '../engine/http/index.js'
import { silentLogger, type Logger } from '../engine/log/index.js'
import { normalizeDomain } from '../engine/names/index.js'
import { normalizeIp } from '../engine/net/index.js'
import { storedFeedsFromConfig, type RpzLayer } from '../engine/rpz-feeds/index.js'
import { createPolicy, HostKeys, loadSafeHosts, Verdict, type Policy, type SafeHosts } from '../engine/policy/index.js'
import { ClientIdMemory, openConfiguredStore, type Store } from '../engine/store/index.js'
import { formatWall, zoneOf } from '../engine/schedule/index.js'
import { LANGUAGES, pickLanguage } from './language.js'
import { reasonText, type PageReason } from './messages.js'
import { safeSearchRedirect } from './safesearch.js'
import { loadTemplates, type PageName, type TemplateSet } from './templates.js'

/** What the block page needs of the front door (blockpage/front-door.ts `createFrontDoor`). */
export interface FrontDoorLike {
  isApiHost(hostHeader: string | undefined): boolean
  handle(req: HttpRequest, res: HttpResponse): Promise<void>
  close?(): void
}

/** Everything one request needs, built once at start. */
export interface BlockPageDeps {
  readonly policy: Policy
  readonly store: Store
  readonly safeHosts: SafeHosts
  readonly templates: TemplateSet
  /** Category names per language. */
  readonly taxonomies: Readonly<Record<Language, Taxonomy>>
  readonly productName: string
  readonly language: Language
  readonly acceptLanguage: boolean
  /** `api.host`: never answered with a block page, even when no front door is mounted. */
  readonly apiHost: string
  readonly frontDoor: FrontDoorLike | undefined
  /** Which client ID the DNS server just answered an address's query for a name with (null: no DoT/DoH). */
  readonly clientIds: ClientIdMemory | null
  readonly logger: Logger
}

/**
 * `HH:MM` in the rule's time zone when a scheduled rule blocked: the next boundary of a rule
 * touching the name, when the decision may change ("blocked until 07:00"); '' otherwise.
 */
function blockedUntil(verdict: Verdict, reason: PageReason): string {
  if (!reason.startsWith('schedule-') || verdict.changesAt === 0) return ''
  return formatWall(zoneOf(verdict.zone), verdict.changesAt)
}

const PAGE_HEADERS: ReadonlyArray<[string, string]> = [
  ['Content-Type', 'text/html; charset=utf-8'],
  ['Cache-Control', 'no-store'],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  // The shipped pages need nothing but inline CSS; an operator's page may show images (a logo). No scripts,
  // ever: even if markup got in, it could not run.
  [
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; img-src data: https:; base-uri 'none'; form-action 'none'"
  ]
]

const TEXT_HEADERS: ReadonlyArray<[string, string]> = [
  ['Content-Type', 'text/plain; charset=utf-8'],
  ['Cache-Control', 'no-store'],
  ['X-Content-Type-Options', 'nosniff']
]

/**
 * The host a Host header names: lower case, port and trailing dot dropped, IDN in punycode; an IPv6
 * literal without brackets. `undefined` when the header is absent or is not `name[:port]`/`[v6][:port]`.
 */
export function hostOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  if (header.startsWith('[')) {
    const m = /^\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?$/.exec(header)
    return m === null ? undefined : normalizeIp(m[1]!)
  }
  const m = /^([^:\s]+)(?::\d{1,5})?$/.exec(header)
  return m === null ? undefined : normalizeDomain(m[1]!)
}

/** True when the client takes HTML: a navigation (browsers send `text/html` in Accept for pages and frames only). */
export function wantsPage(accept: string | undefined): boolean {
  if (accept === undefined) return false
  const a = accept.toLowerCase()
  return a.includes('text/html') || a.includes('application/xhtml+xml')
}

function sendText(res: HttpResponse, status: number, body: string): void {
  res.status(status)
  for (const [k, v] of TEXT_HEADERS) res.header(k, v)
  res.send(body)
}

/** What a page shows of one request; the language's names and texts are added by sendPage. */
interface PageFacts {
  /** "07:00" when a schedule decided and the decision changes within a day, else '' (./schedule.ts). */
  BlockedUntil?: string
  Domain: string
  DisplayDomain: string
  Cats: readonly number[]
  Reason: PageReason
  RetryUrl: string
}

type ShowPage = (
  req: HttpRequest,
  res: HttpResponse,
  name: PageName,
  host: string,
  hostHeader: string,
  reason: PageReason,
  cats: readonly number[]
) => void

function pageFacts(
  scheme: 'http' | 'https',
  req: HttpRequest,
  host: string,
  hostHeader: string,
  reason: PageReason,
  cats: readonly number[]
): PageFacts {
  return {
    Domain: host,
    DisplayDomain: domainToUnicode(host) || host,
    Cats: cats,
    Reason: reason,
    RetryUrl: retryUrl(scheme, hostHeader, req)
  }
}

/** Renders page `name` in the client's language (or the configured one) and sends it, 200. */
function sendPage(deps: BlockPageDeps, req: HttpRequest, res: HttpResponse, name: PageName, f: PageFacts): void {
  const lang = deps.acceptLanguage ? pickLanguage(req.header('accept-language'), deps.language) : deps.language
  const tax = deps.taxonomies[lang]
  const html = deps.templates.render(name, lang, {
    ...f,
    Cats: f.Cats.map((c) => tax.name(c) ?? String(c)),
    ProductName: deps.productName,
    Lang: lang,
    ReasonText: reasonText(lang, f.Reason)
  })
  res.status(200)
  for (const [k, v] of PAGE_HEADERS) res.header(k, v)
  res.send(html)
}

/**
 * A safe-search block: 302 to the safe version of the search (`target`) when the configured redirect
 * allows it; false when the caller shows the safe search page instead.
 */
function redirectToSafeSearch(deps: BlockPageDeps, req: HttpRequest, res: HttpResponse, target: string): boolean {
  const redirect = deps.store.getServerDefaults().safesearchredirect
  const answer = safeSearchRedirect(redirect, target, req.query, deps.safeHosts)
  if (answer.kind === 'redirect') {
    // no-referrer: the search terms of the original URL must not leak to the target a second time.
    res.header('Location', answer.location).header('Referrer-Policy', 'no-referrer')
    sendText(res, 302, 'Found\n')
    return true
  }
  if (answer.why !== 'no-target')
    deps.logger.warn(
      { target: redirect, why: answer.why },
      'safesearchredirect cannot be used; showing the safe search page'
    )
  return false
}

/** The page's "try again" link: the request's own URL. */
function retryUrl(scheme: 'http' | 'https', hostHeader: string, req: HttpRequest): string {
  return `${scheme}://${hostHeader}${req.path}${req.query === '' ? '' : `?${req.query}`}`
}

/** The debug line of one request: who asked for which host, and what the policy says. */
function logRequest(
  logger: BlockPageDeps['logger'],
  req: HttpRequest,
  clientId: string | undefined,
  host: string,
  verdict: Verdict,
  isPage: boolean
): void {
  logger.debug(
    {
      client: req.remoteAddress,
      ...(clientId === undefined ? {} : { clientId }),
      host,
      action: verdict.action,
      reason: verdict.reason,
      page: isPage
    },
    'block page request'
  )
}

/**
 * The request handler of one listener. `scheme` is how that listener is reached (`http` or `https`),
 * for the retry link.
 */
export function createBlockPageHandler(deps: BlockPageDeps, scheme: 'http' | 'https'): Handler {
  const { policy, frontDoor, logger } = deps
  const apiHost = hostOf(deps.apiHost)
  // Reused across requests: evaluate() resets every field and nothing awaits between it and the answer.
  const verdict = new Verdict()
  const debug = logger.isLevelEnabled('debug')

  const page: ShowPage = (req, res, name, host, hostHeader, reason, cats) => {
    sendPage(deps, req, res, name, {
      ...pageFacts(scheme, req, host, hostHeader, reason, cats),
      BlockedUntil: blockedUntil(verdict, reason)
    })
  }

  return async (req, res) => {
    const hostHeader = req.header('host')
    if (frontDoor !== undefined && frontDoor.isApiHost(hostHeader)) {
      await frontDoor.handle(req, res)
      return
    }
    const host = hostOf(hostHeader)
    // A Host that is not a name (`<script>…`) gets a fixed plain-text answer: nothing of it is echoed.
    if (host === undefined || hostHeader === undefined) {
      sendText(res, 400, 'Bad Request: the Host header does not name a host\n')
      return
    }
    if (host === apiHost) {
      sendText(res, 404, 'Not Found\n')
      return
    }
    policy.watcher.check()
    // A subscriber the DNS server knew by its client ID is judged as that ID's user, as its answer was;
    // anyone else by the address (an ID no user holds any more: the server defaults, as for any ID).
    const clientId = deps.clientIds?.recall(req.remoteAddress, host)
    const snap =
      clientId === undefined
        ? policy.snapshotFor(req.remoteAddress)
        : (policy.snapshotForClientId(clientId) ?? policy.anonymousSnapshot())
    policy.evaluateSnapshot(snap, new HostKeys(host), verdict, false, req.remoteAddress)
    const isPage = wantsPage(req.header('accept'))
    if (debug) logRequest(logger, req, clientId, host, verdict, isPage)
    switch (verdict.action) {
      case 'block':
        if (!isPage) {
          sendText(res, 403, 'Blocked\n')
          return
        }
        if (verdict.reason === 'category' || verdict.reason === 'schedule-category') {
          page(req, res, 'blocked_by_category', host, hostHeader, verdict.reason, verdict.blockedCats)
        } else if (verdict.reason === 'rpz' && verdict.blockedCats.length > 0) {
          // An RPZ feed mapped to a category (rpz-feeds.feeds[].category): the category explains it.
          page(req, res, 'blocked_by_category', host, hostHeader, 'rpz', verdict.blockedCats)
        } else {
          page(req, res, 'blocked', host, hostHeader, verdict.reason as PageReason, [])
        }
        return
      case 'safesearch': {
        if (!isPage) {
          sendText(res, 403, 'Blocked\n')
          return
        }
        if (!redirectToSafeSearch(deps, req, res, verdict.target))
          page(req, res, 'blocked', host, hostHeader, 'safesearch', [])
        return
      }
      default:
        // forward (stale DNS answer or changed policy) and safe video (the DNS server answers that one itself).
        if (!isPage) {
          res.header('Retry-After', '1')
          sendText(res, 503, 'Not blocked: retry\n')
          return
        }
        page(req, res, 'unblocked', host, hostHeader, 'unblocked', [])
    }
  }
}

export interface BlockPageOptions {
  config: Readonly<Config>
  /** The RPZ feeds the policy asks; those of `rpz-feeds` as the store holds them when absent. */
  feeds?: RpzLayer | null
  /** The store to read; opened from `common.db` (and closed on close()) when absent. */
  store?: Store
  /** Requests for `api.host` go here; without one they get 404 (never a block page). */
  frontDoor?: FrontDoorLike
  logger?: Logger
  impl?: 'auto' | HttpImpl
  /** Override `proxy.safesearch-hosts`. */
  safeHosts?: SafeHosts
  /** Override the listen addresses (tests: port 0); default `blockpage.listen` / `blockpage.tls-listen`. */
  listen?: string
  tlsListen?: string
}

export interface RunningBlockPage {
  /** Port of the HTTP listener. */
  readonly port: number
  /** Port of the HTTPS listener, when `blockpage.tls-listen` is set. */
  readonly tlsPort: number | undefined
  readonly impl: HttpImpl
  readonly endpoints: readonly string[]
  /** What GET /health answers a caller on this host (engine/health). */
  health(): HealthReport
  close(): Promise<void>
}

/** Loads the category names of both languages; a missing file for a non-default language falls back to the default's names. */
function loadTaxonomies(dir: string, lang: Language, logger: Logger): Record<Language, Taxonomy> {
  const main = loadTaxonomy(dir, lang)
  const out = {} as Record<Language, Taxonomy>
  for (const l of LANGUAGES) {
    if (l === lang) {
      out[l] = main
      continue
    }
    try {
      out[l] = loadTaxonomy(dir, l)
    } catch (err) {
      logger.warn(
        { err, lang: l },
        "category names missing for this language; pages in it show the default language's names"
      )
      out[l] = main
    }
  }
  return out
}

/** Builds the per-request dependencies from the config (templates compiled, taxonomies loaded). */
export function createBlockPageDeps(
  options: BlockPageOptions & { store: Store; clientIds?: ClientIdMemory | null }
): BlockPageDeps {
  const { config, store } = options
  const logger = options.logger ?? silentLogger()
  const bp = config.blockpage
  const language = bp.language ?? config.datafiles.language
  const safeHosts = options.safeHosts ?? loadSafeHosts(config.proxy['safesearch-hosts'])
  const policy = createPolicy(config, store, { safeHosts, feeds: options.feeds ?? null })
  const templates = loadTemplates(bp.templates, language)
  if (templates.missingDir)
    logger.warn({ templates: bp.templates }, 'blockpage.templates does not exist; serving the shipped templates')
  return {
    policy,
    store,
    safeHosts,
    templates,
    taxonomies: loadTaxonomies(config.datafiles.cats, language, logger),
    productName: bp['product-name'],
    language,
    acceptLanguage: bp['accept-language'],
    apiHost: config.api.host,
    frontDoor: options.frontDoor,
    clientIds: options.clientIds ?? null,
    logger
  }
}

/**
 * Starts the block page on `blockpage.listen` (and `blockpage.tls-listen` when set).
 *
 * @example
 * const bp = await startBlockPage({ config, frontDoor: createFrontDoor(config, logger), logger })
 * console.log(bp.endpoints) // ['blockpage http 0.0.0.0:80']
 * await bp.close()
 */
/** The block page role's /health: its listeners and the store it reads. */
function blockPageHealth(
  store: Store,
  endpoints: string[],
  certs: readonly CertificateExpiry[],
  warnDays: number
): HealthReport {
  const problems: HealthProblem[] = []
  const generation = storeGeneration(() => store.generation(), problems)
  problems.push(...certificateProblems(certs, warnDays))
  return healthReport({
    role: 'blockpage',
    listeners: endpoints,
    problems,
    ...(generation === undefined ? {} : { generation })
  })
}

function blockPageTls(config: Readonly<Config>): { cert: string; key: string } {
  return { cert: config.blockpage['tls-cert'] ?? '', key: config.blockpage['tls-key'] ?? '' }
}

/** `filterd_blockpage_tls_cert_not_after_seconds{listener}`: when the HTTPS listener's certificate expires. */
function registerCertificateGauge(metrics: HttpMetrics, certs: readonly CertificateExpiry[]): void {
  void new Gauge({
    name: 'filterd_blockpage_tls_cert_not_after_seconds',
    help: 'unix time at which the certificate served by an HTTPS listener of the block page expires',
    labelNames: ['listener'],
    registers: [metrics.registry],
    collect() {
      for (const c of certs) this.set({ listener: c.listener }, c.notAfter)
    }
  })
}

/** Mounts the pages (every path), /metrics and /health on one listener's server. */
function routeBlockPage(
  server: HttpServer,
  metrics: HttpMetrics,
  handler: Handler,
  health: () => HealthReport,
  frontDoor: FrontDoorLike | undefined
): void {
  const page = metrics.wrap('/*', handler)
  server.route('*', '/*', page)
  // Loopback callers get the metrics; a subscriber asking a blocked site for /metrics, the page.
  metrics.mount(server, page)
  // Likewise /health; for the API's host name it is the API's own /health, through the front door.
  server.route('GET', '/health', async (req, res) => {
    if (!isLoopback(req.remoteAddress) || frontDoor?.isApiHost(req.header('host')) === true) return await page(req, res)
    const r = health()
    res.json(r, r.ok ? 200 : 503)
  })
}

export async function startBlockPage(options: BlockPageOptions): Promise<RunningBlockPage> {
  const { config } = options
  const logger = options.logger ?? silentLogger()
  const stack = new RoleStack()
  try {
    const store = options.store ?? stack.own(openConfiguredStore(config))
    stack.defer(() => options.frontDoor?.close?.())
    // The RPZ feeds, so a name a feed blocks is explained as the DNS server blocked it (one policy):
    // the copy the dns role of this host keeps in the store (engine/rpz-feeds/feed-store.ts).
    const feeds = options.feeds === undefined ? storedFeedsFromConfig(config, store) : null
    // What the DNS role remembers of client-ID queries (engine/store/client-id-memory.ts): only DoT and DoH carry IDs.
    const clientIds = encryptedListenerCount(config.proxy) > 0 ? stack.own(ClientIdMemory.open(store.path)) : null
    const deps = createBlockPageDeps({ ...options, store, clientIds, logger, ...(feeds === null ? {} : { feeds }) })
    const bodyLimit = config.api['body-limit']
    const onError = (err: unknown, req: HttpRequest): void => {
      logger.error({ err, host: req.header('host'), path: req.path }, 'block page request failed')
    }
    const endpoints = stack.endpoints
    // The HTTPS listener reads its certificate once, at start: its expiry is read from the same file then.
    const certs: CertificateExpiry[] = []
    const health = (): HealthReport => blockPageHealth(store, endpoints, certs, config.common['tls-cert-warn-days'])
    const metrics = createHttpMetrics('blockpage')
    registerCertificateGauge(metrics, certs)
    const listenOn = async (
      address: string,
      scheme: 'http' | 'https'
    ): Promise<{ port: number; server: HttpServer }> => {
      const server = createHttpServer({
        impl: options.impl ?? 'auto',
        bodyLimit,
        onError,
        ...(scheme === 'https' ? { tls: blockPageTls(config) } : {}),
        logger
      })
      routeBlockPage(server, metrics, createBlockPageHandler(deps, scheme), health, options.frontDoor)
      stack.own(server)
      const hp = parseHostPort(address)
      try {
        const { port } = await server.listen(hp.host, hp.port)
        if (scheme === 'https')
          certs.push({ listener: 'https', notAfter: certificateNotAfter(readFileSync(blockPageTls(config).cert)) })
        endpoints.push(`blockpage ${scheme} ${formatHostPort({ host: hp.host, port })}`)
        return { port, server }
      } catch (err) {
        throw new EngineError('ENGINE_LISTEN', `blockpage: cannot listen on ${address}: ${(err as Error).message}`, {
          cause: err
        })
      }
    }
    const http = await listenOn(options.listen ?? config.blockpage.listen, 'http')
    const tlsAddress = options.tlsListen ?? config.blockpage['tls-listen']
    const https = tlsAddress === undefined ? undefined : await listenOn(tlsAddress, 'https')
    logger.info(
      {
        templates: config.blockpage.templates,
        language: deps.language,
        acceptLanguage: deps.acceptLanguage,
        frontDoor: options.frontDoor !== undefined
      },
      'block page ready'
    )
    return {
      port: http.port,
      tlsPort: https?.port,
      impl: http.server.impl,
      endpoints,
      health,
      close: () => stack.close()
    }
  } catch (err) {
    await stack.close().catch(() => {})
    throw err
  }
}
