/**
 * The management API server: the route table of routes/ mounted on the project's HTTP adapter (uWS, or
 * node:http where the addon does not load). The factory takes its store and taxonomy from the caller, so the
 * role, the tests and the benchmark run the very same server.
 *
 * Every write is one `store.write` per request: a handler validates the whole request first, then reads and
 * writes inside the transaction (so concurrent requests never lose each other's updates), and answers only
 * once the commit is durable. A request that fails changes nothing.
 */
import { createHttpServer, type HttpImpl, type HttpServer } from '../engine/http/index.js'
import type { Config } from '../engine/config/index.js'
import type { Logger } from '../engine/log/index.js'
import { loadTaxonomy, type Taxonomy, type TaxonomyLanguage } from '../engine/categories/index.js'
import type { CategoryDb } from '../engine/catdb/index.js'
import { createPolicy, type Policy } from '../engine/policy/index.js'
import type { RpzLayer } from '../engine/rpz-feeds/index.js'
import type { Store } from '../engine/store/index.js'
import { ReportTime, duckdbReports, type ReportSource, type StatsDb } from '../engine/stats/index.js'
import { createApiGuard } from './auth.js'
import type { ApiContext } from './context.js'
import { renderOpenApi } from './openapi.js'
import { LiveLog, type LiveLogOptions } from './live-log.js'
import { registerUi } from './ui-static.js'
import { pattern } from './route-table.js'
import { ROUTES } from './routes/index.js'
import { answeringStoreRefusals } from './shared-store.js'
import { rpzZonesReader } from './routes/rpz.js'
import { DEFAULT_LIST_SETTINGS, ListRefresher } from '../engine/lists/index.js'

export interface ApiServerOptions {
  readonly store: Store
  readonly taxonomy: Taxonomy
  /** The folder of the taxonomy files (`datafiles.cats`): the other language is read from it on first request. */
  readonly taxonomyDir?: string
  readonly categories: CategoryDb
  /** Read: `api['body-limit']`; `common['vendor-names']` and `proxy['safesearch-hosts']` for the policy. */
  /** `rpz` (for GET /rpz/zones) may be left out: the role then reads as off. */
  readonly config: Readonly<Pick<Config, 'api' | 'common' | 'proxy' | 'stats'> & { rpz?: Config['rpz'] }>
  /** The verdict code of the check routes; default: one built from the config, as the DNS server builds it. */
  readonly policy?: Policy
  /** The RPZ feeds the policy asks (as the store holds them), so /check explains as the DNS server decides. */
  readonly feeds?: RpzLayer | null
  readonly logger: Logger
  /** The statistics reports' database and time zone. */
  readonly stats: {
    readonly db: StatsDb
    readonly timezone: string
    readonly now?: () => number
    /** Where the reports are read (default: the DuckDB store `db`). */
    readonly reports?: ReportSource
  }
  /** The live query log: the folder it follows (default `stats.dir`) and its limits. */
  readonly liveLog?: LiveLogOptions & { readonly dir?: string }
  /** The list subscriptions' refresher; default: one over the store with the default settings, not started. */
  readonly lists?: ListRefresher
  /** The console's built files (default dist/ui). */
  readonly uiDir?: string
  /** HTTP implementation (default `'auto'`: uWS when it loads). */
  readonly impl?: 'auto' | HttpImpl
}

export interface ApiServer {
  /** The listener; every route added to it (the API's, /metrics, the console) is behind the api.auth rule (auth.ts). */
  readonly http: HttpServer
  /** The live query log's clients (tests read its bounds). */
  readonly liveLog: LiveLog
  listen(host: string, port: number): Promise<{ port: number }>
  close(): Promise<void>
}

/**
 * The taxonomy by language: the configured one, and the other read once from `dir` when first asked
 * (an operator may ship one language only: then the configured one answers, with a warning logged once).
 */
function taxonomies(
  configured: Taxonomy,
  dir: string | undefined,
  logger: Logger
): (lang: TaxonomyLanguage | undefined) => Taxonomy {
  const loaded = new Map<TaxonomyLanguage, Taxonomy>([[configured.lang, configured]])
  return (lang) => {
    if (lang === undefined) return configured
    let tax = loaded.get(lang)
    if (tax === undefined) {
      tax = configured
      if (dir !== undefined) {
        try {
          tax = loadTaxonomy(dir, lang)
        } catch (err) {
          logger.warn(
            { err, lang },
            'category names in this language are not available; the configured language answers'
          )
        }
      }
      loaded.set(lang, tax)
    }
    return tax
  }
}

/** The path with its trailing slash toggled: `/config/` ↔ `/config` (scripts are not consistent about it). */
function toggledSlash(p: string): string {
  return p.endsWith('/') ? p.slice(0, -1) : p + '/'
}

/** What every route handler is given: the store, the policy, the statistics and the live log. */
function apiContext(options: ApiServerOptions, policy: Policy, liveLog: LiveLog): ApiContext {
  const { logger, stats } = options
  let openApi: string | undefined
  return {
    liveLog,
    openApiText: () => (openApi ??= renderOpenApi()),
    store: options.store,
    taxonomy: options.taxonomy,
    taxonomyIn: taxonomies(options.taxonomy, options.taxonomyDir, logger),
    categories: options.categories,
    policy,
    unknownClientId: options.config.proxy['unknown-client-id'],
    rpzZones: rpzZonesReader(options.config.rpz),
    logger,
    stats: {
      db: stats.db,
      reports: stats.reports ?? duckdbReports(stats.db),
      time: new ReportTime(stats.timezone),
      now: stats.now ?? Date.now
    },
    lists:
      options.lists ??
      new ListRefresher({ store: options.store, settings: DEFAULT_LIST_SETTINGS, configSources: [], logger })
  }
}

/**
 * Builds the API server; call `listen` to serve.
 *
 * @example
 * const api = createApiServer({ store, taxonomy, categories, config, logger })
 * const { port } = await api.listen('127.0.0.1', 0)
 */
export function createApiServer(options: ApiServerOptions): ApiServer {
  const { logger } = options
  const { feeds = null, categories } = options
  const policy = options.policy ?? createPolicy(options.config, options.store, { categories, feeds })
  const liveLog = new LiveLog(options.liveLog?.dir ?? options.config.stats.dir, options.liveLog)
  const ctx = apiContext(options, policy, liveLog)
  const raw = createHttpServer({
    impl: options.impl ?? 'auto',
    bodyLimit: options.config.api['body-limit'],
    logger: {
      warn: (message) => {
        logger.warn(message)
      }
    },
    // The only place a real fault is logged: once per failed request, then the client gets a bare 500.
    onError: (err, req) => {
      logger.error({ err, method: req.method, path: req.path }, 'request failed')
    }
  })
  // Credentials, loopback and the audit line of every write (auth.ts), for every route of this listener.
  const guard = createApiGuard({ store: options.store, config: options.config.api, logger })
  const http: HttpServer = {
    impl: raw.impl,
    route(method, p, handler) {
      raw.route(method, p, guard.wrap(answeringStoreRefusals(handler, logger)))
      return this
    },
    listen: (host, port) => raw.listen(host, port),
    close: () => raw.close()
  }
  const registered = new Set<string>()
  const add = (method: string, p: string, handle: Parameters<HttpServer['route']>[2]): void => {
    const key = `${method} ${p}`
    if (registered.has(key)) return
    registered.add(key)
    http.route(method, p, handle)
  }
  for (const r of ROUTES) {
    const handle = (req: Parameters<typeof r.handle>[1], res: Parameters<typeof r.handle>[2]): void | Promise<void> =>
      r.handle(ctx, req, res)
    const p = pattern(r.path)
    add(r.method, p, handle)
    for (const alias of r.aliases ?? []) add(r.method, alias, handle)
  }
  // Aliases with the other trailing slash come last, so a documented path always wins over an alias.
  for (const r of ROUTES) {
    const handle = (req: Parameters<typeof r.handle>[1], res: Parameters<typeof r.handle>[2]): void | Promise<void> =>
      r.handle(ctx, req, res)
    add(r.method, toggledSlash(pattern(r.path)), handle)
  }
  // The operator console (ui/), on the same listener as the API it calls.
  registerUi(http, options.uiDir)
  return {
    http,
    listen: (host, port) => http.listen(host, port),
    liveLog,
    async close() {
      guard.close()
      await liveLog.close()
      await http.close()
    }
  }
}
