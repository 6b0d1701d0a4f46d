export { normalizeDomain, normalizeUrlEntry, normalizeLookupUrl, isIPv4, MAX_NAME_LENGTH } from './normalize.js'
export type { UrlEntry, LookupUrl } from './normalize.js'
export { HostKeys, firstIn, type SuffixKeys } from './suffix-keys.js'
export { ABSENT, KeyTable } from './key-table.js'
