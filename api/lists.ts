/**
 * The api role's part in list subscriptions (engine/lists, docs/lists.md): the api role is the
 * store's writer, so it runs the refresher (docs/lists.md) when `lists.refresh` is on. With Redis every api host may
 * run it; a source's claim in Redis lets one host fetch it, and the shared store carries the result.
 */
import type { Config } from '../engine/config/index.js'
import type { Logger } from '../engine/log/index.js'
import type { Store } from '../engine/store/index.js'
import type { Taxonomy } from '../engine/categories/index.js'
import { configSources, ListRefresher } from '../engine/lists/index.js'
import type { SharedStoreLink } from './shared-store.js'

export function createListRefresher(
  config: Readonly<Config>,
  store: Store,
  logger: Logger,
  shared: SharedStoreLink | undefined,
  taxonomy: Taxonomy
): ListRefresher {
  const sources = configSources(config.lists.sources)
  for (const s of sources) {
    if (s.category !== undefined && !taxonomy.has(s.category))
      logger.warn({ source: s.id, category: s.category }, 'lists.sources: the category does not exist in the taxonomy')
  }
  const refresher = new ListRefresher({
    store,
    settings: config.lists,
    configSources: sources,
    logger,
    ...(shared === undefined ? {} : { claim: (id: string) => shared.listClaim(id) }),
    ...(config.common['host-id'] === undefined ? {} : { host: config.common['host-id'] })
  })
  // Its first pass comes one tick later, after the listener is up (and never keeps a failed start alive).
  if (config.lists.refresh) refresher.start()
  return refresher
}
