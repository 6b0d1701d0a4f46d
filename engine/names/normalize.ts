/**
 * Domain-name normalisation: one function decides what a "key" is, for data files, the store,
 * the importers, the API and the built-in whitelist, so every part of the product agrees that
 * `Кремль.РФ.`, `кремль.рф` and `xn--e1ajeds9e.xn--p1ai` are one name.
 *
 * A key is lower case ASCII: IDNs are converted to punycode (UTS #46 via the WHATWG URL
 * `domainToASCII` that Node ships), the trailing root dot is dropped, each label is 1..63
 * characters of `[a-z0-9_-]` and the whole name is at most 253 characters (RFC 1035 §2.3.4).
 *
 * Deliberately lenient where real blocklists are: `_` occurs in real names (`_dmarc`, CDN hosts),
 * and a label may start or end with `-` (UT1 has `w-w-i-s-.com`); DNS itself carries any byte,
 * the hostname rule of RFC 952/1123 is a registration policy we cannot enforce on other people's
 * data. Deliberately strict where a mistake would widen a match: a name whose last label is all
 * digits must be a dotted-quad IPv4 address, so `1.2.3` or `999.1.1.1` never becomes a key.
 *
 * URL entries (`host/path`) keep the path byte-exact: paths are case-sensitive on most servers
 * and the UT1 `urls` files contain upper-case paths.
 */
import { domainToASCII, domainToUnicode } from 'node:url'

export const MAX_NAME_LENGTH = 253
export const MAX_LABEL_LENGTH = 63

const CH_DOT = 0x2e
const CH_DASH = 0x2d
const CH_UNDERSCORE = 0x5f

/** `[a-z0-9_-]` after ASCII lower-casing; 128 entries, indexed by char code. */
const LABEL_CHAR = new Uint8Array(128)
for (let c = 0x61; c <= 0x7a; c++) LABEL_CHAR[c] = 1
for (let c = 0x30; c <= 0x39; c++) LABEL_CHAR[c] = 1
LABEL_CHAR[CH_DASH] = 1
LABEL_CHAR[CH_UNDERSCORE] = 1

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

/** True for a dotted-quad IPv4 address without leading zeros (`10.0.0.1`, not `010.0.0.1`). */
export function isIPv4(name: string): boolean {
  return IPV4.test(name)
}

/**
 * Normalises a domain name to its key, or returns `undefined` if it is not a valid name.
 *
 * @example normalizeDomain('Кремль.РФ.') === 'xn--e1ajeds9e.xn--p1ai'
 */
export function normalizeDomain(input: string): string | undefined {
  let name = input
  if (name.length > 0 && name.charCodeAt(name.length - 1) === CH_DOT) name = name.slice(0, -1)
  if (name.length === 0) return undefined
  if (!isAscii(name)) {
    // domainToASCII lower-cases, maps (UTS #46) and punycodes; it returns '' when IDNA fails.
    // It also turns ideographic full stops into '.', so the dot check runs after it.
    name = domainToASCII(name)
    if (name.length === 0) return undefined
    if (name.charCodeAt(name.length - 1) === CH_DOT) name = name.slice(0, -1)
  } else {
    name = name.toLowerCase()
  }
  return isValidKey(name) && validALabels(name) ? name : undefined
}

/**
 * A label that starts with `xn--` claims to be punycode (an A-label, RFC 5890): it must decode and
 * encode back to itself. `xn--`, `xn--zz` or `xn--abc-` (which decodes to plain ASCII) are not
 * names any registry can hold, so they are refused rather than stored as keys.
 */
function validALabels(name: string): boolean {
  if (!name.includes('xn--')) return true
  for (const label of name.split('.')) {
    if (!label.startsWith('xn--')) continue
    // An A-label decodes to a label with a non-ASCII character and encodes back to itself. The
    // first test matters on Node 22+, whose domainToUnicode hands an undecodable label back as is.
    const unicode = domainToUnicode(label)
    if (unicode === label || !/[^\x00-\x7f]/.test(unicode) || domainToASCII(unicode) !== label) return false
  }
  return true
}

/** Checks an already lower-cased ASCII name against the label, length and IPv4 rules. */
function isValidKey(name: string): boolean {
  const len = name.length
  if (len === 0 || len > MAX_NAME_LENGTH) return false
  let labelStart = 0
  let lastLabelNumeric = true
  for (let i = 0; i <= len; i++) {
    if (i === len || name.charCodeAt(i) === CH_DOT) {
      const labelLen = i - labelStart
      if (labelLen === 0 || labelLen > MAX_LABEL_LENGTH) return false
      labelStart = i + 1
      if (i < len) lastLabelNumeric = true
      continue
    }
    const c = name.charCodeAt(i)
    if (c >= 128 || LABEL_CHAR[c] !== 1) return false
    if (c < 0x30 || c > 0x39) lastLabelNumeric = false
  }
  // An all-digit top label is only meaningful as an IPv4 address; anything else would be a
  // name no resolver can ask for, or a mistyped address whose suffixes could match wide.
  return lastLabelNumeric ? isIPv4(name) : true
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 128) return false
  return true
}

/**
 * The lookup keys of a normalised name, most specific first:
 * `a.b.example.com` → `a.b.example.com`, `b.example.com`, `example.com`, `com`.
 * An IPv4 address has no parents: its only key is itself.
 */
export function suffixesOf(name: string): string[] {
  if (name.length === 0) return []
  if (isIPv4(name)) return [name]
  const out = [name]
  for (let i = name.indexOf('.'); i !== -1; i = name.indexOf('.', i + 1)) out.push(name.slice(i + 1))
  return out
}

/** A URL-level data entry: the normalised host and the path kept byte-exact (it starts with `/`). */
export interface UrlEntry {
  readonly host: string
  readonly path: string
  /** `host + path`: the store key; matched as a prefix of a requested URL's host + path?query. */
  readonly key: string
}

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//

/**
 * Normalises a data-file URL entry `host/path` (an optional `scheme://` is stripped). The host is
 * normalised like a domain; the path is kept exactly as written (case, percent-escapes, query).
 * Returns `undefined` if there is no path or the host is invalid.
 *
 * @example normalizeUrlEntry('HTTP://Example.COM/Some/Path') → { host: 'example.com', path: '/Some/Path', key: 'example.com/Some/Path' }
 */
export function normalizeUrlEntry(input: string): UrlEntry | undefined {
  const rest = input.replace(SCHEME, '')
  const slash = rest.indexOf('/')
  if (slash <= 0) return undefined
  const host = normalizeDomain(rest.slice(0, slash))
  if (host === undefined) return undefined
  const path = rest.slice(slash)
  if (/\s/.test(path)) return undefined
  return { host, path, key: host + path }
}

/** A URL given to the categorization API, reduced to what prefix matching needs. */
export interface LookupUrl {
  readonly host: string
  /** Path and query string exactly as received, starting with `/` (`/` when the URL had none). */
  readonly pathAndQuery: string
  /** `host + pathAndQuery`: compare URL entry keys against this as prefixes. */
  readonly key: string
}

/**
 * Normalises a full URL as the categorization API receives it (`https://User@Host:8443/path?q#frag`)
 * to `{ host, pathAndQuery, key }`: scheme, user info, port and fragment are dropped, the host is
 * normalised like a domain, and the path and query are kept byte-exact (no percent re-encoding, so
 * they compare with data-file URL entries as written). IPv6 literals are not supported (undefined).
 */
export function normalizeLookupUrl(input: string): LookupUrl | undefined {
  let rest = input.trim().replace(SCHEME, '')
  const hash = rest.indexOf('#')
  if (hash !== -1) rest = rest.slice(0, hash)
  let end = rest.length
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i)
    if (c === 0x2f || c === 0x3f) {
      end = i
      break
    } // '/' or '?'
  }
  let authority = rest.slice(0, end)
  let pathAndQuery = rest.slice(end)
  if (pathAndQuery.length === 0) pathAndQuery = '/'
  else if (pathAndQuery.charCodeAt(0) === 0x3f) pathAndQuery = '/' + pathAndQuery
  const at = authority.lastIndexOf('@')
  if (at !== -1) authority = authority.slice(at + 1)
  if (authority.startsWith('[')) return undefined
  const colon = authority.indexOf(':')
  if (colon !== -1) {
    if (!/^\d{1,5}$/.test(authority.slice(colon + 1))) return undefined
    authority = authority.slice(0, colon)
  }
  const host = normalizeDomain(authority)
  if (host === undefined) return undefined
  return { host, pathAndQuery, key: host + pathAndQuery }
}
