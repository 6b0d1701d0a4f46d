/**
 * The `local` role: the locally run categorization service (spec local-categorizer.md,
 * docs/local.md), as the container image runs it.
 *
 *   GET /<domain_name>   200 application/json {category, bad, category_name}; 404 no body when not
 *                        categorized; 503 {"details":"billing failure"} while the last contact
 *                        with the statistics server failed
 *   GET /stat/           200 application/json {counter_cat, counter_unknown_cat}
 *   any other method     405 text/html, Allow: GET
 *
 * The lookup path is synchronous: normalise, a suffix walk in the memory-mapped LMDB tables, a
 * Float64Array increment, and a verdict body cached per distinct category list.
 * Signals: SIGUSR2 sends the counters now; SIGHUP checks for a database update now.
 */
import { mkdirSync } from 'node:fs'
import { loadTaxonomy } from '../engine/categories/index.js'
import { CategoryDb } from '../engine/catdb/index.js'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { createHttpServer, roleHttpImpl, type HttpRequest, type HttpResponse } from '../engine/http/index.js'
import { createHttpMetrics } from '../engine/metrics/http.js'
import { normalizeDomain } from '../engine/names/index.js'
import type { RoleContext, RunningRole } from '../engine/role.js'
import { Store } from '../engine/store/index.js'
import { healthReport, registerHealthRoute, type HealthProblem, type HealthReport } from '../engine/health/index.js'
import { verdictOf } from '../engine/verdict/index.js'
import { LookupCounters } from './counters.js'
import { Reporter } from './reporter.js'
import { Updater } from './updater.js'

const BILLING_FAILURE = JSON.stringify({ details: 'billing failure' })
const METHOD_NOT_ALLOWED = '<!DOCTYPE html>\n<html><head><title>405 Method Not Allowed</title></head>' +
  '<body><h1>405 Method Not Allowed</h1><p>Only GET is supported.</p></body></html>\n'

function notAllowed (res: HttpResponse): void {
  res.status(405).header('Allow', 'GET').header('Content-Type', 'text/html').send(METHOD_NOT_ALLOWED)
}

export async function startRole (ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  const section = config.local
  if (section.key === '') logger.warn('local.key is empty; the statistics server will refuse the reports')
  const taxonomy = loadTaxonomy(config.datafiles.cats, section.language)
  mkdirSync(section.db, { recursive: true })
  const store = Store.open(section.db)
  const catdb = new CategoryDb(store)
  const counters = new LookupCounters(taxonomy.numbers[taxonomy.numbers.length - 1] ?? 0)
  const updater = new Updater({
    collectorUrl: section['collector-url'], key: section.key, intervalSeconds: section['update-interval'], store, catdb, logger
  })
  const reporter = new Reporter({
    collectorUrl: section['collector-url'],
    key: section.key,
    intervalSeconds: section['report-interval'],
    counters,
    logger,
    extra: () => ({ version: updater.applied()?.version ?? null })
  })

  // Verdict bodies per distinct category list: a handful of strings, built once each.
  const bodies = new Map<string, string>()
  const bodyFor = (cats: readonly number[]): string => {
    const k = cats.join(',')
    let body = bodies.get(k)
    if (body === undefined) {
      body = JSON.stringify(verdictOf(cats, taxonomy))
      bodies.set(k, body)
    }
    return body
  }

  const lookup = (req: HttpRequest, res: HttpResponse): void => {
    if (req.method !== 'GET') { notAllowed(res); return }
    if (!reporter.isBillingOk) {
      res.status(503).header('Content-Type', 'application/json').send(BILLING_FAILURE)
      return
    }
    const raw = req.rawParams['*'] ?? ''
    let text = raw
    if (raw.includes('%')) {
      try { text = decodeURIComponent(raw) } catch { text = '' }
    }
    const name = text.includes('/') ? undefined : normalizeDomain(text)
    if (name === undefined) { res.status(404).send(); return }
    const site = catdb.categorize(name)
    if (site === undefined) {
      counters.countUnknown()
      res.status(404).send()
      return
    }
    counters.countCategories(site.categories)
    res.header('Content-Type', 'application/json').send(bodyFor(site.categories))
  }

  const server = createHttpServer({
    logger: { warn: (m: string) => { logger.warn(m) } },
    impl: roleHttpImpl(config.common['http-server'], 'public'),
    bodyLimit: 64 * 1024,
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'request failed'),
    methodNotAllowed: (_req, res) => { notAllowed(res) }
  })
  // Requests counted and timed by route pattern on GET /metrics (loopback callers; for others
  // "/metrics" is a name like any other and goes to the lookup).
  const metrics = createHttpMetrics('local')
  const counted = metrics.wrap('/*', lookup)
  metrics.mount(server, counted)
  server.route('GET', '/stat/', metrics.wrap('/stat/', (req, res) => {
    if (req.method !== 'GET') { notAllowed(res); return }
    res.json(counters.snapshot())
  }))
  const endpoints: string[] = []
  const health = (): HealthReport => {
    const problems: HealthProblem[] = []
    if (!reporter.isBillingOk) problems.push({ what: 'billing', why: `no successful contact with the statistics server ${section['collector-url']}: lookups answer 503` })
    if (catdb.activeVersion === 0) problems.push({ what: 'database', why: 'no category database yet: every name answers 404 until an update is applied' })
    return healthReport({ role: 'local', listeners: endpoints, problems, extra: { databaseVersion: catdb.activeVersion } })
  }
  // /health for callers in the container (the health check, `filterd status`); for others a name like any other.
  registerHealthRoute(server, health, { loopbackOnly: true, fallback: counted })
  server.route('*', '/*', counted)

  // The first contact and the first update check happen before the service answers, so its first
  // answers already reflect them; neither blocks start for longer than its own timeout.
  await Promise.all([reporter.start(), updater.start()])
  if (catdb.activeVersion === 0) logger.warn('no category database yet; every name answers 404 until an update is applied')

  const listen = parseHostPort(section.listen)
  let bound: { port: number }
  try {
    bound = await server.listen(listen.host, listen.port)
  } catch (err) {
    reporter.close()
    await updater.close()
    await store.close()
    throw err
  }
  const onUsr2 = (): void => { void reporter.reportNow() }
  const onHup = (): void => { void updater.checkNow() }
  process.on('SIGUSR2', onUsr2)
  process.on('SIGHUP', onHup)
  endpoints.push(`local http ${formatHostPort({ ...listen, port: bound.port })}`)
  return {
    endpoints,
    health,
    async close () {
      process.off('SIGUSR2', onUsr2)
      process.off('SIGHUP', onHup)
      reporter.close()
      await server.close()
      await updater.close()
      await store.close()
    }
  }
}
