/**
 * `filterd blockpage --config FILE`: the block page on `blockpage.listen` (port 80 in production),
 * with the management API's front door mounted for requests whose Host is `api.host`.
 */
import { createFrontDoor } from './front-door.js'
import type { RoleContext, RunningRole } from '../engine/role.js'
import { roleHttpImpl } from '../engine/http/index.js'
import { startBlockPage } from './server.js'

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  const frontDoor = createFrontDoor(config, logger)
  const running = await startBlockPage({
    config,
    logger,
    frontDoor,
    impl: roleHttpImpl(config.common['http-server'], 'public')
  })
  return {
    endpoints: running.endpoints,
    // A config reload (SIGHUP): the front door's address rules apply live.
    reload: async (next, keys) => {
      if (keys.includes('api.access')) frontDoor.setAccess(next.api.access)
    },
    health: () => running.health(),
    close: () => running.close()
  }
}
