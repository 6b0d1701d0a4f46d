/**
 * Which roles a config runs: the replica follower (sync) only where a shared Redis store or the
 * ClickHouse statistics store (which the sync role feeds) is configured, the rpz role only with `rpz.enabled`, every other role always. `filterd status` and
 * `check-config` leave the others out (no pid file expected, no log or pid folder to check).
 */
import { roleSection, type RoleName, type RoleSection } from './roles.js'
import { sharesRedis } from './shared-store.js'
import type { Config } from './types.js'

export function isRoleEnabled(config: Readonly<Config>, role: RoleName): boolean {
  return (
    (role !== 'sync' || sharesRedis(config) || config.stats.store === 'clickhouse') &&
    (role !== 'rpz' || config.rpz.enabled)
  )
}

/** The config sections of the roles `config` runs, in role order. */
export function enabledSections(config: Readonly<Config>, roles: readonly RoleName[]): RoleSection[] {
  return roles.filter((r) => isRoleEnabled(config, r)).map(roleSection)
}
