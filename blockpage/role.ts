/**
 * `filterd blockpage --config FILE`: the block page on `blockpage.listen` (port 80 in production),
 * with the management API's front door mounted for requests whose Host is `api.host`.
 */
import { createFrontDoor } from './front-door.js'
import type { RoleContext, RunningRole } from '../engine/role.js'
import { roleHttpImpl } from '../engine/http/index.js'
import { startBlockPage } from './server.js'

export async function startRole (ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  const running = await startBlockPage({ config, logger, frontDoor: createFrontDoor(config, logger), impl: roleHttpImpl(config.common['http-server'], 'public') })
  return { endpoints: running.endpoints, close: () => running.close() }
}
