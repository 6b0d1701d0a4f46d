/**
 * What keeps a web page from using the browser that opened it against the management API (issue: a page
 * from another local address added entries to the global blacklist; a DNS-rebinding page read every user).
 * Three checks, as Jupyter makes them for its local server, run by the api guard (auth.ts) on every request
 * of the listener, whether it came straight to `api.listen` or through the front door (which passes the
 * headers they read on untouched):
 *
 * 1. Cross-site requests: a request whose `Sec-Fetch-Site` is `cross-site` or `same-site`, or (from a
 *    browser that sends no `Sec-Fetch-Site`) whose `Origin` is not the origin of its `Host`, gets 403
 *    `API_CROSS_SITE`, unless its `Origin` is one of `api.allowed-origins`. `same-site` counts as foreign:
 *    for an address, the site ignores the port, so another local web server on 127.0.0.1 would otherwise
 *    pass. `same-origin` and `none` (the user typed the address) are let through: a page cannot forge
 *    `Sec-Fetch-*`. So is a top-level navigation that only reads (a link to the console from elsewhere):
 *    the page that made it cannot read the answer. Requests without either header (curl, scripts) are
 *    not browsers' and pass.
 * 2. Writes are JSON: `POST`, `PUT` and `PATCH`, and a `DELETE` with a body, must say `Content-Type:
 *    application/json` (parameters allowed), else 415 `API_UNSUPPORTED_MEDIA_TYPE`. A browser sends that
 *    type cross-origin only after a CORS preflight, which the API never grants; the types a page may send
 *    without one (text/plain, forms) are exactly the ones refused. A bodiless `DELETE` needs no type: a
 *    browser preflights every cross-origin `DELETE`. Nor does a write without a body and without a type
 *    from a caller that is not a browser (neither `Origin` nor `Sec-Fetch-Site`): the specification's
 *    switches (`POST /users/{id}/status/disabled`) have no body, so nothing to type, and billing systems
 *    send them as `curl -X POST URL`. Browsers send `Origin` on every `POST` (and `Sec-Fetch-Site` on
 *    every request), so a page cannot use that exemption. A browser's bodiless write without the type
 *    stays refused whatever its origin: one rule for browsers, and the console types its writes. A
 *    chunked body counts as a body (its length is known only once read).
 * 3. DNS rebinding: on the credential-free loopback path (`api.loopback-without-credentials`), the `Host`
 *    must be one the API answers to: `localhost` or a name under it, a loopback address, or `api.host`.
 *    Anything else gets 421 `API_MISDIRECTED_HOST`: a page whose name was rebound to 127.0.0.1 sends its own
 *    name. Callers with credentials may use any name: a rebound page has none to send. An HTTP/1.0 request
 *    without Host (a health check) passes: browsers always send one.
 */
import type { HttpRequest, HttpResponse } from '../engine/http/index.js'
import { serializedOrigin, hostName, isLoopbackName } from '../engine/net/index.js'
import { API_ERRORS, type ApiErrorCode } from './errors.js'
import { errorBody } from '../engine/http/index.js'

/** An answer the guard gives instead of the handler's. */
export interface Refusal {
  readonly code: ApiErrorCode
  readonly message: string
  readonly headers?: ReadonlyArray<readonly [string, string]>
}

export function sendRefusal(res: HttpResponse, refusal: Refusal): void {
  res.status(API_ERRORS[refusal.code])
  for (const [name, value] of refusal.headers ?? []) res.header(name, value)
  res.header('Content-Type', 'application/json').send(errorBody(refusal.code, refusal.message))
}

const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD'])
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH'])

const CROSS_SITE: Refusal = {
  code: 'API_CROSS_SITE',
  message:
    "cross-site requests are refused: call the API from its own origin, or add the page's origin to api.allowed-origins"
}

/** True when `origin` (an `Origin` header) is the origin a request for `host` (its `Host` header) came from. */
function isOriginOfHost(origin: string, host: string | undefined): boolean {
  const o = serializedOrigin(origin.trim())
  if (o === undefined || host === undefined) return false
  const h = host.trim().toLowerCase()
  const url = new URL(o)
  return url.host === h || `${url.host}:${url.protocol === 'https:' ? 443 : 80}` === h
}

/** Check 1 (module comment): 403 for a cross-site request from an origin not allowed. */
export function crossSiteRefusal(req: HttpRequest, allowedOrigins: ReadonlySet<string>): Refusal | undefined {
  const origin = req.header('origin')
  const site = req.header('sec-fetch-site')?.trim().toLowerCase()
  if (origin === undefined && site === undefined) return undefined
  if (origin !== undefined && allowedOrigins.size > 0) {
    const o = serializedOrigin(origin.trim())
    if (o !== undefined && allowedOrigins.has(o)) return undefined
  }
  if (site === 'same-origin' || site === 'none') return undefined
  if (site !== undefined) {
    const readingNavigation =
      READ_METHODS.has(req.method) && req.header('sec-fetch-mode')?.trim().toLowerCase() === 'navigate'
    return readingNavigation ? undefined : CROSS_SITE
  }
  return isOriginOfHost(origin!, req.header('host')) ? undefined : CROSS_SITE
}

/** True when the request carries a body (a length above 0, or a chunked one). */
function hasBody(req: HttpRequest): boolean {
  const length = req.header('content-length')
  return req.header('transfer-encoding') !== undefined || (length !== undefined && length.trim() !== '0')
}

/** True when the request bears a browser's mark: `Origin` on every write, `Sec-Fetch-Site` on every request. */
function isFromBrowser(req: HttpRequest): boolean {
  return req.header('origin') !== undefined || req.header('sec-fetch-site') !== undefined
}

/** Check 2 (module comment): 415 for a write that does not say it is JSON. */
export function mediaTypeRefusal(req: HttpRequest): Refusal | undefined {
  if (!BODY_METHODS.has(req.method) && !(req.method === 'DELETE' && hasBody(req))) return undefined
  const header = req.header('content-type')
  // A bodiless switch from curl or a script: nothing to type, and no page can send it (module comment).
  if (header === undefined && !hasBody(req) && !isFromBrowser(req)) return undefined
  const type = (header ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json') return undefined
  return {
    code: 'API_UNSUPPORTED_MEDIA_TYPE',
    message: `a ${req.method} must carry Content-Type: application/json${type === '' ? '' : ` (got ${type})`}`,
    headers: [['Accept', 'application/json']]
  }
}

/** Check 3 (module comment): 421 when the credential-free loopback path is asked under a foreign name. */
export function hostRefusal(req: HttpRequest, apiHost: string): Refusal | undefined {
  const header = req.header('host')
  // HTTP/1.0 without Host (a health check): no browser sends that, so no rebound page can.
  if (header === undefined) return undefined
  const name = hostName(header)
  if (name !== '' && (name === apiHost || isLoopbackName(name))) return undefined
  return {
    code: 'API_MISDIRECTED_HOST',
    message: 'without credentials, the API answers only to localhost, a loopback address or api.host'
  }
}
