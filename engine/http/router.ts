/**
 * The route table both implementations share. uWS has its own router, but it differs from ours in the details
 * that the roles depend on (405 with `Allow`, significant trailing slashes, lazily decoded params), and a second
 * router would have to pass the same conformance suite; so uWS registers a single `any('/*')` and every request
 * goes through this table (hono's "one router, many runtimes").
 *
 * Precedence: an exact static path first (a Map lookup, the common case), then `:param` patterns in
 * registration order, then `*` patterns, most specific prefix first. Within one pattern the method is looked up
 * as: exact method, then GET for HEAD (RFC 9110 §9.3.2), then `'*'`. A path that some pattern matches without a
 * handler for the method is a 405 listing the methods that would have been accepted.
 */

export type RouteMatch<H> =
  | { kind: 'found'; handler: H; rawParams: Record<string, string> }
  | { kind: 'method'; allowed: string[] }
  | { kind: 'none' }

interface Pattern<H> {
  readonly segments: string[] // literal segments, or ':name' params; the '*' is removed
  readonly wildcard: boolean
  readonly methods: Map<string, H>
  /** For a wildcard pattern without params: the literal text before `*` (`/url/`), matched without splitting. */
  readonly prefix: string | undefined
}

const NONE = { kind: 'none' } as const

export class Router<H> {
  #static = new Map<string, Map<string, H>>()
  #params: Array<Pattern<H>> = []
  #wildcards: Array<Pattern<H>> = []
  #byPattern = new Map<string, Map<string, H>>()

  add(methods: string | readonly string[], pattern: string, handler: H): void {
    if (!pattern.startsWith('/')) throw new TypeError(`route pattern must start with '/': ${pattern}`)
    const list = typeof methods === 'string' ? [methods] : methods
    let table = this.#byPattern.get(pattern)
    if (table === undefined) {
      table = new Map()
      this.#byPattern.set(pattern, table)
      const segments = pattern.split('/')
      const wildcard = segments[segments.length - 1] === '*'
      if (wildcard) segments.pop()
      for (const s of segments) {
        if (s.includes('*')) throw new TypeError(`'*' is only allowed as the last segment: ${pattern}`)
      }
      if (!wildcard && !segments.some((s) => s.startsWith(':'))) {
        this.#static.set(pattern, table)
      } else if (wildcard) {
        const literal = !segments.some((s) => s.startsWith(':'))
        this.#wildcards.push({
          segments,
          wildcard,
          methods: table,
          prefix: literal ? segments.join('/') + '/' : undefined
        })
        // Stable sort: longer literal prefixes win, equal ones keep registration order.
        this.#wildcards.sort((a, b) => b.segments.length - a.segments.length)
      } else {
        this.#params.push({ segments, wildcard, methods: table, prefix: undefined })
      }
    }
    for (const m of list) {
      const key = m === '*' ? '*' : m.toUpperCase()
      if (table.has(key)) throw new TypeError(`duplicate route ${key} ${pattern}`)
      table.set(key, handler)
    }
  }

  find(method: string, path: string): RouteMatch<H> {
    let allowed: Set<string> | undefined
    const exact = this.#static.get(path)
    if (exact !== undefined) {
      const h = pick(exact, method)
      if (h !== undefined) return { kind: 'found', handler: h, rawParams: {} }
      allowed = addAllowed(allowed, exact)
    }
    if (this.#params.length === 0 && this.#wildcards.length === 0) {
      return allowed === undefined ? NONE : { kind: 'method', allowed: sortAllowed(allowed) }
    }
    // Split once, and only when a pattern needs the segments.
    let parts: string[] | undefined
    for (const p of this.#params) {
      parts ??= path.split('/')
      if (parts.length !== p.segments.length) continue
      const params = matchSegments(p.segments, parts)
      if (params === undefined) continue
      const h = pick(p.methods, method)
      if (h !== undefined) return { kind: 'found', handler: h, rawParams: params }
      allowed = addAllowed(allowed, p.methods)
    }
    for (const p of this.#wildcards) {
      if (p.prefix !== undefined) {
        if (!path.startsWith(p.prefix)) continue
        const h = pick(p.methods, method)
        if (h !== undefined) return { kind: 'found', handler: h, rawParams: { '*': path.slice(p.prefix.length) } }
        allowed = addAllowed(allowed, p.methods)
        continue
      }
      parts ??= path.split('/')
      // '/url/*' splits to ['', 'url'] and needs at least one more part ('/url/' gives ['', 'url', '']).
      if (parts.length <= p.segments.length) continue
      const params = matchSegments(p.segments, parts)
      if (params === undefined) continue
      const h = pick(p.methods, method)
      if (h !== undefined) {
        let offset = 0
        for (let i = 0; i < p.segments.length; i++) offset += parts[i]!.length + 1
        params['*'] = path.slice(offset)
        return { kind: 'found', handler: h, rawParams: params }
      }
      allowed = addAllowed(allowed, p.methods)
    }
    return allowed === undefined ? NONE : { kind: 'method', allowed: sortAllowed(allowed) }
  }
}

function pick<H>(table: Map<string, H>, method: string): H | undefined {
  return table.get(method) ?? (method === 'HEAD' ? table.get('GET') : undefined) ?? table.get('*')
}

function addAllowed<H>(set: Set<string> | undefined, table: Map<string, H>): Set<string> {
  const out = set ?? new Set<string>()
  for (const m of table.keys()) {
    out.add(m)
    if (m === 'GET') out.add('HEAD')
  }
  return out
}

function sortAllowed(set: Set<string>): string[] {
  return [...set].sort()
}

// Returns the raw (still percent-encoded) params, or undefined when a literal differs or a param is empty.
function matchSegments(segments: string[], parts: string[]): Record<string, string> | undefined {
  let params: Record<string, string> | undefined
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!
    const v = parts[i]! // callers checked parts.length >= segments.length
    if (s.length > 0 && s.charCodeAt(0) === 0x3a) {
      // ':'
      if (v.length === 0) return undefined
      params ??= {}
      params[s.slice(1)] = v
    } else if (s !== v) {
      return undefined
    }
  }
  return params ?? {}
}
