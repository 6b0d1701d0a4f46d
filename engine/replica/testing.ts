/**
 * Test and benchmark helpers (not a test file): a store linked to a test Redis the way a host of
 * several is (a follower applying the stream, API writes committed in Redis), in one process.
 */
import type { Logger } from '../log/index.js'
import type { Store } from '../store/index.js'
import { createRemoteCommit } from './commit.js'
import { Follower } from './follower.js'
import { connectSharedStore, redisKeys, type SharedStoreSettings } from './redis.js'
import { until } from '../testing/wait.js'

let prefixes = 0

/** Settings for a test Redis; each call gets its own key prefix unless one is given. */
export function testSettings (host: string, port: number, prefix = `t${process.pid}-${++prefixes}:`, streamLength = 100_000): SharedStoreSettings {
  return {
    keys: redisKeys(prefix),
    streamLength,
    options: { host, port, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (n) => Math.min(50 * n, 500), lazyConnect: true },
    where: `${host}:${port}`
  }
}

export { until } from '../testing/wait.js'

export interface LinkedStore {
  readonly follower: Follower
  close (): Promise<void>
}

/** Follows `settings` into `store` and sends its writes there; resolves once the replica is current. */
export async function linkStore (store: Store, settings: SharedStoreSettings, logger: Logger, applyTimeoutMs = 5000): Promise<LinkedStore> {
  const follower = new Follower(store, settings, { logger })
  follower.start()
  await until('the replica to follow', () => follower.status.state === 'following' && store.replicaState() === 'following')
  const redis = connectSharedStore(settings, { commandTimeout: 3000 })
  store.useRemoteCommit(createRemoteCommit(redis, settings, store, { applyTimeoutMs }))
  return {
    follower,
    async close () {
      store.useRemoteCommit(undefined)
      redis.disconnect()
      await follower.close()
    }
  }
}
