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
 * The routes are in lookup.ts; this file wires them to the store, the updater and the reporter.
 * Signals: SIGUSR2 sends the counters now; SIGHUP checks for a database update now.
 */
import { mkdirSync } from 'node:fs'
import { loadTaxonomy } from '../engine/categories/index.js'
import { CategoryDb } from '../engine/catdb/index.js'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'
import { Store } from '../engine/store/index.js'
import { healthReport, type HealthProblem, type HealthReport } from '../engine/health/index.js'
import { LookupCounters } from './counters.js'
import { createLocalServer } from './lookup.js'
import { Reporter } from './reporter.js'
import { Updater } from './updater.js'

/** The role's /health: billing (the last contact with the statistics server) and the database. */
function localHealth(endpoints: string[], reporter: Reporter, catdb: CategoryDb, collectorUrl: string): HealthReport {
  const problems: HealthProblem[] = []
  if (!reporter.isBillingOk)
    problems.push({
      what: 'billing',
      why: `no successful contact with the statistics server ${collectorUrl}: lookups answer 503`
    })
  if (catdb.activeVersion === 0)
    problems.push({
      what: 'database',
      why: 'no category database yet: every name answers 404 until an update is applied'
    })
  return healthReport({
    role: 'local',
    listeners: endpoints,
    problems,
    extra: { databaseVersion: catdb.activeVersion }
  })
}

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  return await startWithStack(async (stack) => {
    const { config, logger } = ctx
    const section = config.local
    if (section.key === '') logger.warn('local.key is empty; the statistics server will refuse the reports')
    const taxonomy = loadTaxonomy(config.datafiles.cats, section.language)
    mkdirSync(section.db, { recursive: true })
    const store = stack.own(Store.open(section.db))
    const catdb = new CategoryDb(store)
    const counters = new LookupCounters(taxonomy.numbers[taxonomy.numbers.length - 1] ?? 0)
    const collectorUrl = section['collector-url']
    const updater = stack.own(
      new Updater({
        collectorUrl,
        key: section.key,
        intervalSeconds: section['update-interval'],
        store,
        catdb,
        logger
      })
    )
    const reporter = stack.own(
      new Reporter({
        collectorUrl,
        key: section.key,
        intervalSeconds: section['report-interval'],
        counters,
        logger,
        extra: () => ({ version: updater.applied()?.version ?? null })
      })
    )
    const health = (): HealthReport => localHealth(stack.endpoints, reporter, catdb, section['collector-url'])
    const server = createLocalServer(config, logger, {
      catdb,
      taxonomy,
      counters,
      billingOk: () => reporter.isBillingOk,
      health
    })

    // The first contact and the first update check happen before the service answers, so its first
    // answers already reflect them; neither blocks start for longer than its own timeout.
    await Promise.all([reporter.start(), updater.start()])
    if (catdb.activeVersion === 0)
      logger.warn('no category database yet; every name answers 404 until an update is applied')

    const listen = parseHostPort(section.listen)
    const bound = await server.listen(listen.host, listen.port)
    stack.own(server)
    const onUsr2 = (): void => {
      void reporter.reportNow()
    }
    const onHup = (): void => {
      void updater.checkNow()
    }
    process.on('SIGUSR2', onUsr2)
    process.on('SIGHUP', onHup)
    stack.defer(() => {
      process.off('SIGUSR2', onUsr2)
      process.off('SIGHUP', onHup)
    })
    stack.endpoints.push(`local http ${formatHostPort({ ...listen, port: bound.port })}`)
    return { health }
  })
}
