/**
 * engine/lists, the face: remote list subscriptions (docs/lists.md). Their config and keys in the
 * store, the hosts-file parser, the conditional fetch and the refresher the api role runs, the
 * policy's in-memory index of them and their metrics.
 */
export { removeSource } from './apply.js'
export { configSourceProblems, configSources, sourceProblem } from './config.js'
export { readHostsLine } from './hosts-line.js'
export { type ListSource, type ListState, SOURCE_ID, sourceKey, sourceState, stateKey, storedSource } from './keys.js'
export { registerListMetrics } from './metrics.js'
export { SubscriptionIndex } from './policy-index.js'
export { DEFAULT_LIST_SETTINGS, ListRefresher, type RefreshClaim } from './refresher.js'
