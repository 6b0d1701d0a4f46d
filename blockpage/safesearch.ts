/**
 * The safe-search redirect: a search engine host seen by a user with safe search on is sent to the
 * server's `safesearchredirect` (`/config/`), keeping the search terms when both sides are engines
 * whose query parameter we know (`q` on Google, `text` on Yandex, `p` on Yahoo…). Only the terms
 * travel: other parameters of the original request (language, page, filters, tracking) are dropped,
 * and the target's own parameters (`safe=active`, `family=yes`) are kept.
 *
 * A redirect that would come straight back here is refused: when the target's host is itself a
 * safe-search host (conf/safesearch.txt), this same user's DNS answers it with the block page and the
 * browser would loop. The page then explains that safe search is on instead.
 */
import type { SafeHosts } from '../engine/policy/index.js'
import { normalizeDomain } from '../engine/names/index.js'

/** Query parameter holding the search terms, per engine label (the labels of conf/safesearch.txt). */
export const TERMS_PARAM: Readonly<Record<string, string>> = Object.freeze({
  google: 'q',
  bing: 'q',
  yandex: 'text',
  duckduckgo: 'q',
  yahoo: 'p',
  ecosia: 'q',
  brave: 'q',
  mailru: 'q',
  rambler: 'query',
  startpage: 'query',
  qwant: 'q',
  baidu: 'wd',
  aol: 'q',
  ask: 'q'
})

/** Host labels that name an engine, for targets that are not in the safe-search table (`forcesafesearch.google.com`). */
const LABEL_ENGINE: Readonly<Record<string, string>> = Object.freeze({
  google: 'google',
  bing: 'bing',
  yandex: 'yandex',
  ya: 'yandex',
  duckduckgo: 'duckduckgo',
  yahoo: 'yahoo',
  ecosia: 'ecosia',
  brave: 'brave',
  rambler: 'rambler',
  startpage: 'startpage',
  qwant: 'qwant',
  baidu: 'baidu',
  aol: 'aol',
  ask: 'ask'
})

/** The engine a target host belongs to: the safe-search table first, then a label naming an engine. */
export function engineOfHost(host: string, safeHosts: SafeHosts): string | undefined {
  const table = safeHosts.searchEngine(host)
  if (table !== undefined) return table
  const labels = host.split('.')
  // The last label is the TLD; `search.yahoo.com` → yahoo, `familysearch.yandex.ru` → yandex.
  for (let i = labels.length - 2; i >= 0; i--) {
    const e = LABEL_ENGINE[labels[i]!]
    if (e !== undefined) return e
  }
  return undefined
}

export type SafeSearchAnswer =
  { kind: 'redirect'; location: string } | { kind: 'page'; why: 'no-target' | 'bad-target' | 'loop' }

/**
 * Where to send a safe-search request.
 * @param target `safesearchredirect` from `/config/` ('' when unset)
 * @param engine the requested engine's label (Verdict.target)
 * @param query the request's raw query string
 */
export function safeSearchRedirect(
  target: string,
  engine: string,
  query: string,
  safeHosts: SafeHosts
): SafeSearchAnswer {
  if (target === '') return { kind: 'page', why: 'no-target' }
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return { kind: 'page', why: 'bad-target' }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'page', why: 'bad-target' }
  const host = normalizeDomain(url.hostname.startsWith('[') ? '' : url.hostname)
  if (host !== undefined && safeHosts.searchEngine(host) !== undefined) return { kind: 'page', why: 'loop' }
  const from = TERMS_PARAM[engine]
  const toEngine = host === undefined ? undefined : engineOfHost(host, safeHosts)
  const to = toEngine === undefined ? undefined : TERMS_PARAM[toEngine]
  if (from !== undefined && to !== undefined && query !== '') {
    const terms = new URLSearchParams(query).get(from)
    if (terms !== null && terms !== '') url.searchParams.set(to, terms)
  }
  return { kind: 'redirect', location: url.href }
}
