export {
  normalizeDomain, normalizeUrlEntry, normalizeLookupUrl, suffixesOf, isIPv4,
  MAX_NAME_LENGTH, MAX_LABEL_LENGTH
} from './normalize.js'
export type { UrlEntry, LookupUrl } from './normalize.js'
export { HostKeys, type SuffixKeys } from './suffix-keys.js'
