/**
 * The categorization API's three routes, the same on both listeners (the gates in front differ, gates.ts):
 * `GET /domain/<name>`, `GET /url/<full_url>`, `GET /catgroups`. A categorized name is answered without
 * awaiting; only an uncategorized one asks the resolver.
 */
import { encodeCats } from '../engine/catdb/index.js'
import { errorBody, type Handler, type HttpResponse } from '../engine/http/index.js'
import { HostKeys, isIPv4, normalizeDomain, normalizeLookupUrl } from '../engine/names/index.js'
import { CATAPI_ERRORS, type CatApiErrorCode } from './errors.js'
import type { CatLookup } from './lookup.js'
import type { Existence } from './resolver.js'

/** Clients may cache answers for at most 12 hours (spec, "Limits"). */
export const CACHE_CONTROL = 'max-age=43200'
/** Errors, throttling and answers that depend on a resolver outage must not be cached. */
export const NO_STORE = 'no-store'

const JSON_TYPE = 'application/json'

/** Anything that can say whether a name exists (ExistenceChecker, or a test double). */
export interface ExistenceSource {
  check(name: string): Promise<Existence>
}

export interface CatHandlers {
  readonly domain: Handler
  readonly url: Handler
  readonly catgroups: Handler
}

export function sendJsonError(res: HttpResponse, code: CatApiErrorCode, message: string): void {
  res
    .status(CATAPI_ERRORS[code])
    .header('Content-Type', JSON_TYPE)
    .header('Cache-Control', NO_STORE)
    .send(errorBody(code, message))
}

function sendVerdict(res: HttpResponse, status: number, body: Buffer): void {
  res.status(status).header('Content-Type', JSON_TYPE).header('Cache-Control', CACHE_CONTROL).send(body)
}

// normalizeLookupUrl drops the port after checking only that it is 1-5 digits.
const AUTHORITY_PORT = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^/?#]*:(\d+)(?:[/?#]|$)/
function hasValidPort(url: string): boolean {
  const m = AUTHORITY_PORT.exec(url)
  return m === null || Number(m[1]) <= 65535
}

export function createHandlers(lookup: CatLookup, existence: ExistenceSource): CatHandlers {
  // Not categorized: 206 when a resolver says NXDOMAIN, else 404 without a body. A resolver outage
  // is not NXDOMAIN: 404 still tells the truth (the name is not categorized), but `no-store`, so the
  // client asks again instead of keeping an answer we could not complete for 12 hours.
  const answerUncategorized = async (res: HttpResponse, host: string): Promise<void> => {
    if (isIPv4(host)) {
      res.status(404).header('Cache-Control', CACHE_CONTROL).send()
      return
    }
    const outcome = await existence.check(host)
    if (outcome === 'nxdomain') sendVerdict(res, 206, lookup.nonExistingBody)
    else
      res
        .status(404)
        .header('Cache-Control', outcome === 'exists' ? CACHE_CONTROL : NO_STORE)
        .send()
  }

  const domain: Handler = (req, res) => {
    let raw = req.rawParams['*'] ?? ''
    if (raw.includes('%')) {
      try {
        raw = decodeURIComponent(raw)
      } catch {
        sendJsonError(res, 'CATAPI_BAD_DOMAIN', 'malformed percent-encoding in the domain name')
        return
      }
    }
    const name = normalizeDomain(raw)
    if (name === undefined) {
      sendJsonError(res, 'CATAPI_BAD_DOMAIN', 'not a valid domain name')
      return
    }
    // Undecoded categories: nothing is decoded on a hit whose body is cached.
    const hit = lookup.catdb.findRaw(new HostKeys(name))
    if (hit !== undefined) {
      sendVerdict(res, 200, lookup.bodyFor(hit.raw))
      return
    }
    return answerUncategorized(res, name)
  }

  const url: Handler = (req, res) => {
    let full = req.rawParams['*'] ?? ''
    if (req.query !== '') full += '?' + req.query
    // A client that encoded the whole URL as one path segment (encodeURIComponent: `https%3A%2F%2F…`)
    // is decoded once; otherwise the URL is used exactly as received, escapes included.
    if (/^[A-Za-z][A-Za-z0-9+.-]*%3A/i.test(full)) {
      try {
        full = decodeURIComponent(full)
      } catch {
        sendJsonError(res, 'CATAPI_BAD_URL', 'malformed percent-encoding in the URL')
        return
      }
    }
    const lu = full === '' || !hasValidPort(full) ? undefined : normalizeLookupUrl(full)
    if (lu === undefined) {
      sendJsonError(res, 'CATAPI_BAD_URL', 'not a valid URL (expected scheme://host/path?query)')
      return
    }
    const site = lookup.catdb.categorizeUrl(lu.host, lu.pathAndQuery)
    if (site !== undefined) {
      sendVerdict(res, 200, lookup.bodyFor(encodeCats(site.categories)))
      return
    }
    return answerUncategorized(res, lu.host)
  }

  const catgroups: Handler = (_req, res) => {
    sendVerdict(res, 200, lookup.catgroupsBody)
  }

  return { domain, url, catgroups }
}
