/** Every endpoint of the management API, in the order docs/openapi.yaml lists them. */
import type { RouteDef } from '../route-table.js'
import { addressRoutes } from './addresses.js'
import { categoryRoutes } from './categories.js'
import { checkRoutes } from './check.js'
import { clientIdRoutes } from './client-ids.js'
import { defaultsRoutes } from './defaults.js'
import { documentRoutes } from './document.js'
import { filterRoutes } from './filter.js'
import { listRoutes } from './lists.js'
import { liveLogRoutes } from './live-log.js'
import { overviewRoutes } from './overview.js'
import { rpzRoutes } from './rpz.js'
import { statsRoutes } from './stats.js'
import { subscriptionRoutes } from './subscriptions.js'
import { userRoutes } from './users.js'

export const ROUTES: readonly RouteDef[] = [
  ...userRoutes,
  ...defaultsRoutes,
  ...addressRoutes,
  ...clientIdRoutes,
  ...categoryRoutes,
  ...filterRoutes,
  ...listRoutes,
  ...subscriptionRoutes,
  ...rpzRoutes,
  ...statsRoutes,
  ...overviewRoutes,
  ...checkRoutes,
  ...liveLogRoutes,
  ...documentRoutes
]
