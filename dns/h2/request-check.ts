/*
 * Whether a decoded request header list is a well-formed HTTP/2 request (RFC 9113 §8.2 and §8.3),
 * and its content-length. A malformed request is a stream error of type PROTOCOL_ERROR
 * (./connection.ts): it never reaches the DoH exchange, which would read the first of two
 * `:path`s or answer a request smuggled past an HTTP/1.1 hop.
 *
 * The fields are the decoder's list (name, value, name, value...) of latin1 strings, one char per
 * octet, so the character rules are checked on char codes, without a regular expression.
 */

/** checkRequest's answer for a malformed request. */
export const MALFORMED = -2
/** checkRequest's answer when the request has no content-length. */
export const NO_LENGTH = -1

/** Fields only HTTP/1.1 connections have (RFC 9113 §8.2.2); `te` is allowed as "trailers" only. */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])

const METHOD = 1
const SCHEME = 2
const AUTHORITY = 4
const PATH = 8

/** The request pseudo-headers (RFC 9113 §8.3.1), by name: any other (`:status`, unknown) is malformed. */
const PSEUDO: Readonly<Record<string, number>> = {
  ':method': METHOD,
  ':scheme': SCHEME,
  ':authority': AUTHORITY,
  ':path': PATH
}

/**
 * The request's content-length (NO_LENGTH when it has none), or MALFORMED: an upper-case or
 * otherwise invalid field name, a value with NUL, CR or LF or edge whitespace, an unknown or
 * response pseudo-header, one after a regular field or repeated, a connection-specific field,
 * `te` other than "trailers", a missing `:method`, `:scheme` or `:path` (CONNECT: `:authority`
 * only), an empty `:path`, or a content-length that is not one decimal number.
 */
export function checkRequest(fields: readonly string[]): number {
  let seen = 0
  let regular = false
  let length = NO_LENGTH
  let method = ''
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!
    const value = fields[i + 1]!
    if (!isValue(value)) return MALFORMED
    if (name.charCodeAt(0) === 0x3a) {
      // ':'
      const bit = PSEUDO[name]
      if (bit === undefined || regular || (seen & bit) !== 0) return MALFORMED
      seen |= bit
      if (bit === METHOD) method = value
      else if (bit === PATH && value.length === 0) return MALFORMED
      continue
    }
    regular = true
    if (!isRegularField(name, value)) return MALFORMED
    if (name === 'content-length') {
      const n = decimal(value)
      if (n < 0 || (length !== NO_LENGTH && n !== length)) return MALFORMED
      length = n
    }
  }
  if ((seen & METHOD) === 0) return MALFORMED
  // CONNECT names a host, not a resource (RFC 9113 §8.5); DoH answers it 405.
  if (method === 'CONNECT') return (seen & (SCHEME | PATH)) === 0 && (seen & AUTHORITY) !== 0 ? length : MALFORMED
  return (seen & (SCHEME | PATH)) === (SCHEME | PATH) ? length : MALFORMED
}

/** Whether a trailer section is well formed: regular fields only (RFC 9113 §8.1). */
export function checkTrailers(fields: readonly string[]): boolean {
  for (let i = 0; i < fields.length; i += 2) {
    const value = fields[i + 1]!
    if (!isValue(value) || !isRegularField(fields[i]!, value)) return false
  }
  return true
}

// A regular field's name (lower-case token characters) and whether HTTP/2 allows it.
function isRegularField(name: string, value: string): boolean {
  if (name.length === 0) return false
  for (let j = 0; j < name.length; j++) {
    const c = name.charCodeAt(j)
    // Controls, space, upper case, DEL and above (RFC 9113 §8.2.1).
    if (c <= 0x20 || (c >= 0x41 && c <= 0x5a) || c >= 0x7f) return false
  }
  if (CONNECTION_SPECIFIC.has(name)) return false
  return name !== 'te' || value === 'trailers'
}

// A field value without NUL, CR or LF, and without whitespace at either end (RFC 9113 §8.2.1).
function isValue(value: string): boolean {
  const n = value.length
  if (n === 0) return true
  const first = value.charCodeAt(0)
  const last = value.charCodeAt(n - 1)
  if (first === 0x20 || first === 0x09 || last === 0x20 || last === 0x09) return false
  for (let j = 0; j < n; j++) {
    const c = value.charCodeAt(j)
    if (c === 0 || c === 0x0a || c === 0x0d) return false
  }
  return true
}

// A content-length: decimal digits only, as a number; -1 when it is not one.
function decimal(s: string): number {
  if (s.length === 0 || s.length > 15) return -1
  let n = 0
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j) - 0x30
    if (c < 0 || c > 9) return -1
    n = n * 10 + c
  }
  return n
}
