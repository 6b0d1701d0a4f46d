/**
 * engine/rpz-feeds, the face: the RPZ feeds filterd takes in (config section `rpz-feeds`): their config,
 * transfers in and NOTIFY, the packed trigger table, the copy kept in the store, their metrics.
 */
export { feedConfigProblems } from './feed-config.js'
export { type RpzFeedSnapshot, type RpzFeedsSnapshot, rpzFeedMetrics } from './feed-metrics.js'
export { type RpzHit, type RpzLayer, startFeedTransfers, storedFeedsFromConfig } from './feed-set.js'
export { type FeedAction } from './feed.js'
