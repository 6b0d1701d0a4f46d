/**
 * A claim shared by the hosts of one Redis (`common.redis-ip`): `SET key holder NX PX ms`, so one
 * host at a time does a piece of work that must be done once for all of them (the vendor usage
 * report, api/usage-report.ts). The claim lapses by itself after `ms`, so a host that dies
 * holding it stops no one for longer than that.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { whenReady } from './redis.js'

export interface PeriodClaim {
  /** True when this host now holds the claim for `ms`; false when another host holds it. Rejects when Redis does not answer. */
  take(ms: number): Promise<boolean>
  /** Gives the claim back if this host still holds it (its work failed: the next try, by any host, may do it). */
  release(): Promise<void>
}

// Deletes the key only if this holder still has it (not a claim another host took after ours lapsed).
const RELEASE_LUA = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"

export function redisPeriodClaim(redis: Redis, key: string, holder: string = randomUUID()): PeriodClaim {
  return {
    async take(ms) {
      await whenReady(redis, 1000)
      return (await redis.set(key, holder, 'PX', Math.max(1, Math.round(ms)), 'NX')) === 'OK'
    },
    async release() {
      await redis.eval(RELEASE_LUA, 1, key, holder)
    }
  }
}
