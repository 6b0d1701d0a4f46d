/**
 * engine/replica, the face: the shared Redis store. The connection and its settings, the writes
 * (commit), the follower that keeps this host's LMDB store a replica and its audit, the claims the
 * hosts take turns by, and statistics between hosts (segments; the old row stream kept to drain an
 * upgrade). Loaded only where `common.redis-ip` is set: a single host never loads the Redis client.
 */
export { redisPeriodClaim } from './claim.js'
export { createRemoteCommit } from './commit.js'
export {
  type Divergence,
  FOLLOWER_STATES,
  Follower,
  type FollowerStatus,
  adoptSharedStore,
  diverged,
  seedSharedStore
} from './follower.js'
export { connectSharedStore, sharedStoreSettings, whenReady } from './redis.js'
export { statsKeys } from './row-stream.js'
export { type SegmentApplier, startSegmentApplier } from './segment-fetch.js'
export { segmentKeys, segmentSecret, serveSegments, startSegmentProducer } from './segments.js'
