/**
 * Safe search and safe video host lists, kept in one data file (conf/safesearch.txt) so that an
 * operator can add a search engine without a release. Line format:
 *
 *   search <pattern> [<engine>]       a search engine host; the block page redirects it
 *   video  <pattern> <target>         a video host answered as <target> (its restricted mode)
 *
 * A pattern is an exact host (`www.bing.com`) or a host whose last label(s) may be any top-level
 * domain, written `www.google.*` (matches www.google.com, www.google.co.uk, …). Matching is on
 * the exact name, never on its subdomains: `mail.google.com` is not a search engine.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { normalizeDomain } from '../names/index.js'

export const DEFAULT_SAFE_HOSTS_FILE = fileURLToPath(new URL('../../../conf/safesearch.txt', import.meta.url))

export interface SafeHosts {
  /** The search engine's label (e.g. `google`) when `name` is a search host. */
  searchEngine(name: string): string | undefined
  /** The restricted-mode target (e.g. `restrict.youtube.com`) when `name` is a video host. */
  videoTarget(name: string): string | undefined
}

interface Table {
  exact: Map<string, string>
  /** `www.google.` → engine: matched when the rest of the name is a plausible public suffix. */
  prefixes: Array<[string, string]>
}

function lookup(t: Table, name: string): string | undefined {
  const hit = t.exact.get(name)
  if (hit !== undefined) return hit
  for (const [prefix, value] of t.prefixes) {
    if (name.startsWith(prefix)) {
      // `www.google.*`: the wildcard covers one or two labels (com, co.uk, com.br), no more,
      // so that `www.google.attacker.example.com` is not taken for Google.
      const rest = name.slice(prefix.length)
      const dots = rest.split('.').length - 1
      if (rest.length > 0 && dots <= 1) return value
    }
  }
  return undefined
}

export function parseSafeHosts(text: string, file = 'safesearch.txt'): SafeHosts {
  const search: Table = { exact: new Map(), prefixes: [] }
  const video: Table = { exact: new Map(), prefixes: [] }
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim()
    if (line === '') return
    const [kind, pattern, extra] = line.split(/\s+/)
    const where = `${file}:${i + 1}`
    if ((kind !== 'search' && kind !== 'video') || pattern === undefined)
      throw new Error(`${where}: expected "search PATTERN [ENGINE]" or "video PATTERN TARGET"`)
    if (kind === 'video' && extra === undefined)
      throw new Error(`${where}: a video host needs its restricted-mode target`)
    const table = kind === 'search' ? search : video
    const value = kind === 'search' ? (extra ?? pattern) : normalizeDomain(extra!)
    if (value === undefined) throw new Error(`${where}: "${extra}" is not a host name`)
    if (pattern.endsWith('.*')) {
      const stem = normalizeDomain(pattern.slice(0, -2))
      if (stem === undefined) throw new Error(`${where}: bad pattern "${pattern}"`)
      table.prefixes.push([stem + '.', value])
    } else {
      const host = normalizeDomain(pattern)
      if (host === undefined) throw new Error(`${where}: bad host "${pattern}"`)
      table.exact.set(host, value)
    }
  })
  return {
    searchEngine: (name) => lookup(search, name),
    videoTarget: (name) => lookup(video, name)
  }
}

export function loadSafeHosts(file: string = DEFAULT_SAFE_HOSTS_FILE): SafeHosts {
  return parseSafeHosts(readFileSync(file, 'utf8'), file)
}
