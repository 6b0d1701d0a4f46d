import type { Config } from './types.js'

/**
 * Whether the config names a shared Redis store (`common.redis-ip`, or Sentinels with
 * `common.redis-sentinels`): the one test of "several hosts on one Redis" every role and command
 * asks, without loading the Redis client.
 */
export function sharesRedis(config: Readonly<Config>): boolean {
  return config.common['redis-ip'] !== undefined || (config.common['redis-sentinels'] ?? []).length > 0
}
