/**
 * The api role's write path when several hosts share one Redis (`common.redis-ip`): every policy
 * write goes to Redis through engine/replica (one Lua script per request, acknowledged once Redis
 * ran it and this host's replica applied it); reads stay on the local LMDB replica. A write Redis
 * cannot take (down, emptied, another store) answers 503 `API_STORE_UNAVAILABLE` and changes
 * nothing. Without `common.redis-ip` no Redis client is loaded; a write to a store the sync role
 * marked as following Redis (Redis turned on while this role ran without it) is then refused by the
 * store and answered 503 `API_STORE_FOLLOWS_REDIS` (`answeringStoreRefusals`, around every route).
 * A write the local store cannot commit for a full file system answers 507 `API_STORE_FULL` with
 * Retry-After; nothing of it is kept, and the role goes on serving. A report while the statistics
 * store cannot be used (engine/stats/reopening.ts) answers 503 `API_STATS_UNAVAILABLE` with the reason.
 */
import { sharesRedis, type Config } from '../engine/config/index.js'
import { isEngineError } from '../engine/errors.js'
import { HttpError, type Handler } from '../engine/http/index.js'
import type { Logger } from '../engine/log/index.js'
import type { Store } from '../engine/store/index.js'
import type { StatsDb } from '../engine/stats/index.js'
import type { UsageClaim } from './usage-report.js'
import type { SegmentApplier } from '../engine/replica/index.js'
import type { RefreshClaim } from '../engine/lists/index.js'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { API_ERRORS, apiError } from './errors.js'

/** The Retry-After of a write refused for a full store: room comes back when an operator acts, not in a second. */
const STORE_FULL_RETRY_AFTER_S = 60

export interface SharedStoreLink {
  readonly where: string
  /**
   * Fetches and applies every host's statistics segments to this host's reports
   * (engine/replica/segment-fetch.ts). Producing this host's segments is the sync role's
   * (sync/role.ts), so it happens once per host.
   */
  startStats(statsDb: StatsDb): SegmentApplier
  /** The claim the hosts take so one of them sends each interval's vendor usage report. */
  readonly usageClaim: UsageClaim
  /** The claim the hosts take so one of them refreshes a subscribed list (engine/lists/refresher.ts). */
  listClaim(id: string): RefreshClaim
  close(): Promise<void>
}

export async function linkSharedStore(
  config: Readonly<Config>,
  store: Store,
  logger: Logger
): Promise<SharedStoreLink | undefined> {
  if (!sharesRedis(config)) return undefined
  // Loaded only here, so a single host never loads the Redis client.
  /* eslint-disable no-restricted-syntax -- the one lazy load in product code: the Redis client only where Redis is configured */
  const {
    sharedStoreSettings,
    connectSharedStore,
    createRemoteCommit,
    statsKeys,
    segmentKeys,
    startSegmentApplier,
    redisPeriodClaim
  } = await import('../engine/replica/index.js')
  /* eslint-enable no-restricted-syntax */
  const settings = sharedStoreSettings(config)!
  const redis = connectSharedStore(settings, { commandTimeout: 3000 })
  const commit = createRemoteCommit(redis, settings, store, {
    applyTimeoutMs: config.sync['apply-timeout'],
    onSlowApply: (seq) => {
      logger.warn(
        { seq },
        "a write reached Redis but this host's replica has not applied it yet (is the sync role running?)"
      )
    }
  })
  store.useRemoteCommit(async (write, again) => {
    try {
      await commit(write, again)
    } catch (err) {
      if (isEngineError(err) && err.code === 'ENGINE_SHARED_STORE_UNAVAILABLE')
        logger.warn({ err: err.message }, 'write refused: shared store unavailable')
      throw storeRefusal(err)
    }
  })
  const host = config.common['host-id'] ?? hostname()
  return {
    where: settings.where,
    usageClaim: redisPeriodClaim(redis, settings.keys.usageReport, `${host}:${process.pid}`),
    listClaim: (id) =>
      redisPeriodClaim(
        redis,
        `${config.common['redis-prefix'] ?? 'filterd:'}lists:claim:${id}`,
        `${host}:${process.pid}`
      ),
    startStats(statsDb) {
      const prefix = config.common['redis-prefix'] ?? 'filterd:'
      return startSegmentApplier(
        {
          redis: connectSharedStore(settings, { commandTimeout: 6000 }),
          keys: segmentKeys(prefix),
          streamKeys: statsKeys(prefix),
          db: statsDb,
          timeZone: config.stats.timezone,
          self: host,
          incoming: join(config.stats.db, 'incoming'),
          logger
        },
        {
          intervalMs: config.stats['import-interval'] * 1000,
          pruneEveryMs: config.stats['import-interval'] * 1000,
          parquetDir: config.stats['parquet-dir']
        }
      )
    },
    async close() {
      store.useRemoteCommit(undefined)
      redis.disconnect()
    }
  }
}

/**
 * A write the store refused, as the API answers it: the shared store unavailable (503
 * `API_STORE_UNAVAILABLE`), or a store that follows Redis written by an api role whose config has no
 * `common.redis-ip`, such as one started before Redis was turned on (503 `API_STORE_FOLLOWS_REDIS`,
 * the message naming the key); anything else unchanged.
 */
function storeRefusal(err: unknown, logger?: Logger): unknown {
  if (!isEngineError(err)) return err
  if (err.code === 'ENGINE_SHARED_STORE_UNAVAILABLE') return apiError('API_STORE_UNAVAILABLE', withoutClientDetail(err))
  if (err.code === 'ENGINE_STORE_FOLLOWS_REDIS') return apiError('API_STORE_FOLLOWS_REDIS', err.message)
  if (err.code === 'ENGINE_STATS_UNAVAILABLE') return apiError('API_STATS_UNAVAILABLE', err.message)
  // The ClickHouse statistics store away (stats.store: clickhouse): the reports' 503, as for DuckDB's.
  if (err.code === 'ENGINE_CLICKHOUSE_UNAVAILABLE') return apiError('API_STATS_UNAVAILABLE', err.message)
  if (err.code === 'ENGINE_STORE_FULL') {
    // The one line that tells the operator: the client's 507 is not logged as a fault.
    logger?.error({ err: err.message }, 'a write was refused: the file system of the policy store is full')
    return new HttpError(API_ERRORS.API_STORE_FULL, 'API_STORE_FULL', err.message, {
      headers: ['Retry-After', String(STORE_FULL_RETRY_AFTER_S)]
    })
  }
  return err
}

/**
 * `handler` with the store's refusals answered as API errors (`storeRefusal`). A synchronous handler
 * stays synchronous (the HTTP adapter creates no promise for it); a write's refusal arrives as its
 * promise's rejection.
 */
export function answeringStoreRefusals(handler: Handler, logger?: Logger): Handler {
  return (req, res) => {
    let result: void | Promise<void>
    try {
      result = handler(req, res)
    } catch (err) {
      throw storeRefusal(err, logger)
    }
    return result instanceof Promise
      ? result.catch((err: unknown) => {
          throw storeRefusal(err, logger)
        })
      : result
  }
}

/**
 * The 503's message: the shared store's own sentence without the Redis client's words ("Stream isn't
 * writeable and enableOfflineQueue options is false"), which are for the operator and stay in the
 * log line written with it.
 */
function withoutClientDetail(err: Error): string {
  const detail = (err.cause as Error | undefined)?.message
  return detail === undefined || detail === '' ? err.message : err.message.replace(`: ${detail}`, '')
}
