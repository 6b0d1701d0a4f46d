/**
 * Test and benchmark helpers (not a test file): a store linked to a test Redis the way a host of
 * several is (a follower applying the stream, API writes committed in Redis), in one process.
 */
import { silentLogger, type Logger } from '../log/index.js'
import { Store } from '../store/index.js'
import { createRemoteCommit } from '../replica/commit.js'
import { Follower } from '../replica/follower.js'
import { connectSharedStore, redisKeys, type SharedStoreSettings } from '../replica/redis.js'
import { makeTempDir, type Cleanup } from './temp.js'
import { until } from './wait.js'

let prefixes = 0

/** Settings for a test Redis; each call gets its own key prefix unless one is given. */
export function testSettings(
  host: string,
  port: number,
  prefix = `t${process.pid}-${++prefixes}:`,
  streamLength = 100_000
): SharedStoreSettings {
  return {
    keys: redisKeys(prefix),
    streamLength,
    options: {
      host,
      port,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (n) => Math.min(50 * n, 500),
      lazyConnect: true
    },
    where: `${host}:${port}`
  }
}

export interface LinkedStore {
  readonly follower: Follower
  close(): Promise<void>
}

/** Follows `settings` into `store` and sends its writes there; resolves once the replica is current. */
export async function linkStore(
  store: Store,
  settings: SharedStoreSettings,
  logger: Logger,
  applyTimeoutMs = 5000
): Promise<LinkedStore> {
  const follower = new Follower(store, settings, { logger })
  follower.start()
  await until(
    'the replica to follow',
    () => follower.status.state === 'following' && store.replicaState() === 'following'
  )
  const redis = connectSharedStore(settings, { commandTimeout: 3000 })
  store.useRemoteCommit(createRemoteCommit(redis, settings, store, { applyTimeoutMs }))
  return {
    follower,
    async close() {
      store.useRemoteCommit(undefined)
      redis.disconnect()
      await follower.close()
    }
  }
}

/** A host of several, in this process: a store in a temp folder, linked to the shared store. */
export interface LinkedHost {
  readonly store: Store
  readonly link: LinkedStore
}

/**
 * A host linked to `settings` once its replica is current; after the test the link is closed first,
 * then the store (a follower still running would read a closed store).
 */
export async function linkedHost(
  t: Cleanup,
  settings: SharedStoreSettings,
  logger: Logger = silentLogger()
): Promise<LinkedHost> {
  const { dir, cleanup } = makeTempDir('filterd-replica-')
  const store = Store.open(dir)
  const linked: { link?: LinkedStore } = {}
  t.after(async () => {
    await linked.link?.close()
    await store.close()
    cleanup()
  })
  linked.link = await linkStore(store, settings, logger)
  return { store, link: linked.link }
}
