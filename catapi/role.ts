/**
 * `filterd catapi --config FILE`: the public categorization API, its registered listener
 * (`catapi.listen`, HTTP Basic) and its anonymous one (`catapi.anon-listen`, `catapi.anon-limit`
 * requests per minute per address), over the store at `common.db`.
 */
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { loadTaxonomy } from '../engine/categories/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'
import { Store } from '../engine/store/index.js'
import {
  healthReport,
  registerHealthRoute,
  storeGeneration,
  type HealthProblem,
  type HealthReport
} from '../engine/health/index.js'
import { roleHttpImpl } from '../engine/http/index.js'
import { ExistenceChecker } from './resolver.js'
import { createCatApi } from './server.js'

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  return await startWithStack(async (stack) => {
    const { config, logger } = ctx
    const section = config.catapi
    const taxonomy = loadTaxonomy(config.datafiles.cats, section.language ?? config.datafiles.language)
    const resolvers = (section.resolver ?? config.dnscache.forward).map((a) => parseHostPort(a, 53))
    const store = stack.own(Store.open(config.common.db))
    const api = stack.own(
      createCatApi({
        store,
        taxonomy,
        existence: new ExistenceChecker({ resolvers }),
        anonLimit: section['anon-limit'],
        usageTimeZone: config.stats.timezone,
        impl: roleHttpImpl(config.common['http-server'], 'known'),
        logger
      })
    )
    const health = (): HealthReport => {
      const problems: HealthProblem[] = []
      const generation = storeGeneration(() => store.generation(), problems)
      return healthReport({
        role: 'catapi',
        listeners: stack.endpoints,
        problems,
        ...(generation === undefined ? {} : { generation })
      })
    }
    // Public listeners: /health for callers on this host only (monitoring, `filterd status`).
    for (const server of [api.registered, api.anonymous]) registerHealthRoute(server, health, { loopbackOnly: true })
    const reg = parseHostPort(section.listen)
    const anon = parseHostPort(section['anon-listen'])
    const ports = await api.listen(reg, anon)
    stack.endpoints.push(
      `catapi registered http://${formatHostPort({ host: reg.host, port: ports.registered })}`,
      `catapi anonymous http://${formatHostPort({ host: anon.host, port: ports.anonymous })}`
    )
    return { health }
  })
}
