/**
 * What every handler shares: the store and taxonomy it serves, and the checks that turn request text into the
 * store's canonical values (user ids, addresses, category numbers, domains). Each check throws the HttpError
 * the API documents for it, naming the element at fault, so a handler validates everything before it opens
 * its one write transaction.
 */
import type { HttpRequest } from '../engine/http/index.js'
import type { Logger } from '../engine/log/index.js'
import type { Taxonomy, TaxonomyLanguage } from '../engine/categories/index.js'
import type { CategoryDb } from '../engine/catdb/index.js'
import type { Policy } from '../engine/policy/index.js'
import type { ReportSource, ReportTime, StatsDb } from '../engine/stats/index.js'
import type { ListKind, Store, StoreWriter, UserRecord } from '../engine/store/index.js'
import { MAX_NAME_LENGTH, normalizeDomain } from '../engine/names/index.js'
import { parseCidr } from '../engine/net/index.js'
import { ALLOW_ONLY } from '../engine/policy/index.js'
import { apiError } from './errors.js'
import type { LiveLog } from './live-log.js'
import type { ListRefresher } from '../engine/lists/index.js'
import type { RpzZonesView } from './routes/rpz.js'
import { checkBody, checkUniqueKeys, type BodyTypes } from './validate.js'
import type { BodySchemaName } from './schemas.js'

export interface ApiContext {
  readonly store: Store
  readonly taxonomy: Taxonomy
  /** The taxonomy in `lang` (the configured one when undefined, or when that language's file is missing). */
  taxonomyIn(lang: TaxonomyLanguage | undefined): Taxonomy
  readonly categories: CategoryDb
  /** The live query log's clients (routes/live-log.ts). */
  readonly liveLog: LiveLog
  /** The DNS server's verdict code, for the check routes (routes/check.ts). */
  readonly policy: Policy
  /** `proxy.unknown-client-id`: what the DNS server does with a client ID no user holds (routes/check.ts). */
  readonly unknownClientId: 'refuse' | 'anonymous'
  readonly logger: Logger
  /** What the statistics reports read. */
  readonly stats: StatsContext
  /** The list subscriptions' refresher (engine/lists; started by the role when lists.refresh is on). */
  readonly lists: ListRefresher
  /** The rpz role's zone list (routes/rpz.ts). */
  readonly rpzZones: () => Promise<RpzZonesView>
  /** docs/openapi.yaml's text, generated from the route table (api/openapi.ts) once, on first request. */
  openApiText(): string
}

/** What the statistics reports read: the statistics environment, its time zone, and the clock. */
export interface StatsContext {
  readonly db: StatsDb
  /** The reports, read from the store `stats.store` names (engine/stats ReportSource). */
  readonly reports: ReportSource
  readonly time: ReportTime
  readonly now: () => number
}

/** The spec's User object. */
export interface UserView extends UserRecord {
  whitelist: string[]
  blacklist: string[]
}

export interface Move {
  address: string
  from: string
}

const USER_ID = /^[A-Za-z0-9_-]{1,32}$/

export function isUserId(text: string): boolean {
  return USER_ID.test(text)
}

/** The `{user_id}` path parameter, checked: 400 `API_BAD_USER_ID` otherwise. */
export function userIdOf(req: HttpRequest): string {
  const id = req.params.user_id ?? ''
  if (!USER_ID.test(id))
    throw apiError('API_BAD_USER_ID', 'user_id must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -', 'user_id')
  return id
}

/** The body parsed (400 on bad JSON) and checked against a schema and for repeated names (422). */
export async function bodyOf<N extends BodySchemaName>(req: HttpRequest, name: N): Promise<BodyTypes[N]> {
  const value = await req.json()
  if (typeof value === 'object' && value !== null) checkUniqueKeys((await req.body()).toString('utf8'))
  return checkBody(name, value)
}

function at(prefix: string, i: number): string {
  return `${prefix}[${i}]`
}

/** Why `text` is not an address a user can own, for the 422 message. */
function addressProblem(text: string): string {
  if (text === '') return 'is empty'
  if (/\s/.test(text)) return 'contains white space'
  if (text.includes('%')) return 'has a zone index (%…), which only means something on one host'
  if (/\/0\d/.test(text)) return 'has a prefix length with a leading zero'
  return 'is not an IP address or a CIDR prefix with zero host bits'
}

/**
 * Canonical addresses and prefixes, duplicates dropped, order kept; 422 `API_INVALID_ADDRESS` on the
 * first bad one. A /0 prefix (0.0.0.0/0, ::/0) is refused: one write would make one user the owner
 * of every address no other user has, anonymous subscribers included.
 */
export function canonicalAddresses(list: readonly string[], field = ''): string[] {
  const out = new Set<string>()
  for (let i = 0; i < list.length; i++) {
    const text = list[i]!
    const cidr = parseCidr(text)
    if (cidr === undefined)
      throw apiError('API_INVALID_ADDRESS', `${JSON.stringify(text)} ${addressProblem(text)}`, at(field, i))
    if (cidr.prefix === 0) {
      throw apiError(
        'API_INVALID_ADDRESS',
        `${JSON.stringify(text)} is a /0 prefix: it would give this user every address`,
        at(field, i)
      )
    }
    out.add(cidr.text)
  }
  return [...out]
}

/** One address from a path parameter: 400 `API_BAD_PARAM` when it is not one. */
export function canonicalAddressParam(text: string, name: string): string {
  const cidr = parseCidr(text)
  if (cidr === undefined)
    throw apiError('API_BAD_PARAM', `${JSON.stringify(text)} is not an IP address or CIDR prefix`, name)
  return cidr.text
}

/** Category numbers that exist in the taxonomy, ascending, without duplicates; 422 `API_UNKNOWN_CATEGORY`. */
export function checkedCategories(ctx: ApiContext, list: readonly number[], field = ''): number[] {
  for (let i = 0; i < list.length; i++) {
    if (!ctx.taxonomy.has(list[i]!))
      throw apiError('API_UNKNOWN_CATEGORY', `category ${list[i]} does not exist`, at(field, i))
  }
  return sortedUnique(list)
}

export function sortedUnique(list: readonly number[]): number[] {
  return [...new Set(list)].sort((a, b) => a - b)
}

/** Why `text` is not a domain name, for the 422 message. */
function domainProblem(text: string): string {
  if (text === '' || text === '.') return 'is empty: not a domain name'
  if (text.length > MAX_NAME_LENGTH + 1) return `is longer than ${MAX_NAME_LENGTH} characters: not a domain name`
  if (/\s/.test(text)) return 'contains white space: not a domain name'
  return 'is not a domain name'
}

/**
 * List entries as the category database keys them (lower case, punycode, no trailing dot), duplicates
 * dropped, order kept. `-` is kept in blacklists and refused in whitelists (422 `API_ALLOW_ONLY_WHITELIST`).
 */
export function canonicalDomains(list: readonly string[], kind: ListKind, field = ''): string[] {
  const out = new Set<string>()
  for (let i = 0; i < list.length; i++) {
    const text = list[i]!
    // normalizeDomain accepts "-" (a label may be a lone hyphen) and "-." too: both are the allow-only entry.
    const name = text === ALLOW_ONLY ? ALLOW_ONLY : normalizeDomain(text)
    if (name === undefined)
      throw apiError('API_INVALID_DOMAIN', `${JSON.stringify(text)} ${domainProblem(text)}`, at(field, i))
    if (name === ALLOW_ONLY && kind === 'white') {
      throw apiError('API_ALLOW_ONLY_WHITELIST', 'the allow-only entry "-" belongs in a blacklist', at(field, i))
    }
    out.add(name)
  }
  return [...out]
}

/** A domain from a path parameter (`-` allowed for blacklists); 400 `API_BAD_PARAM` otherwise. */
export function canonicalDomainParam(text: string, kind: ListKind): string {
  const name = text === ALLOW_ONLY ? ALLOW_ONLY : normalizeDomain(text)
  if (name === undefined || (name === ALLOW_ONLY && kind === 'white')) {
    throw apiError(
      'API_BAD_PARAM',
      `${JSON.stringify(text)} is not a domain name${kind === 'white' ? ' ("-" only exists in blacklists)' : ''}`,
      'domain'
    )
  }
  return name
}

export function viewOf(store: Store, user: UserRecord): UserView {
  // `client_ids` is left out when empty: a user without client IDs keeps the spec's User object as it was.
  const { client_ids: ids, ...rest } = user
  return {
    ...rest,
    ...(ids !== undefined && ids.length > 0 ? { client_ids: ids } : {}),
    whitelist: store.getList(user.name, 'white'),
    blacklist: store.getList(user.name, 'black')
  }
}

/** The user or 404 `API_USER_NOT_FOUND`. Inside a write, this reads the transaction's own state. */
export function requireUser(store: Store, id: string): UserRecord {
  const user = store.getUser(id)
  if (user === undefined) throw apiError('API_USER_NOT_FOUND', `user ${id} does not exist`, 'user_id')
  return user
}

/** Inside a write: the user, or a new one started from `/userconfig/` (the spec's implicit creation). */
export function userOrNew(w: StoreWriter, id: string): { user: UserRecord; created: boolean } {
  const user = w.store.getUser(id)
  return user === undefined ? { user: w.store.newUser(id), created: true } : { user, created: false }
}

/**
 * Inside a write: makes `addresses` exactly the user's addresses. Addresses it loses are unmapped (they fall
 * back to the server defaults); addresses another user held are moved here and reported. Stores the user.
 */
export function setAddresses(
  w: StoreWriter,
  user: UserRecord,
  addresses: readonly string[]
): { user: UserRecord; moved: Move[] } {
  const keep = new Set(addresses)
  const lost = user.ip.filter((a) => !keep.has(a))
  if (lost.length > 0) w.releaseAddresses(user.name, lost)
  const moved = addresses.length > 0 ? w.claimAddresses(user.name, addresses) : []
  const next = { ...user, ip: [...addresses] }
  w.putUser(next)
  return { user: next, moved }
}
