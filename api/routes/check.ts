/**
 * "Why is this blocked (or open) for this subscriber?": the verdict the DNS server would give right now,
 * computed by the very `Policy` the DNS server and the block page run (engine/policy), with the step that
 * decided and the list entry or database key that matched. No second implementation: the route only turns
 * the reusable `Verdict` into JSON.
 *
 * `GET /check/{domain}?ip=ADDR` judges by address (exact, then longest prefix, else anonymous), as a DNS
 * query from ADDR is judged; `?client-id=ID` (with or without `ip`) by the user holding the client ID, as a
 * DoH or DoT query naming it is judged (an unknown ID: refused, or anonymous, as `proxy.unknown-client-id` says). `GET /users/{user_id}/check/{domain}` judges with the user's own settings,
 * whatever its addresses (a user without one can be checked before it is connected).
 */
import { HostKeys, Verdict, type Snapshot } from '../../engine/policy/index.js'
import { normalizeDomain } from '../../engine/names/index.js'
import { normalizeIp } from '../../engine/net/index.js'
import { zoneOf, type ScheduleWindow } from '../../engine/schedule/index.js'
import type { HttpRequest } from '../../engine/http/index.js'
import { userIdOf, type ApiContext } from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'
import { isClientId } from './client-ids.js'

export interface CheckAnswer {
  domain: string
  address: string | null
  /** Present when the request named a client ID. */
  clientId?: string
  user: string | null
  action: Verdict['action'] | 'refuse'
  step: Verdict['reason'] | 'unknown-client-id'
  matched: string | null
  /** `list:<id>` or `rpz:<zone>` when a list subscription or an RPZ feed gave the deciding entry; left out otherwise. */
  source?: string
  categories: readonly number[]
  blockedCategories: readonly number[]
  site: { domain: string; categories: number[] } | null
  target: string | null
  schedule: { name: string; timezone: string; window: ScheduleWindow & { index: number } } | null
  changesAt: { utc: string; local: string; timezone: string } | null
}

/** The scheduled rule that decided, with its open window, from the rules of the verdict's user. */
function scheduleOf(ctx: ApiContext, v: Verdict): CheckAnswer['schedule'] {
  if (v.schedule === '') return null
  const rules = v.user === null ? ctx.store.getServerDefaults().schedules : ctx.store.getUser(v.user)?.schedules
  const rule = rules?.find((r) => r.name === v.schedule)
  const window = rule?.windows[v.window]
  if (rule === undefined || window === undefined) return null
  return { name: rule.name, timezone: rule.timezone ?? ctx.stats.time.timeZone, window: { index: v.window, ...window } }
}

function changesAtOf(v: Verdict): CheckAnswer['changesAt'] {
  if (v.changesAt === 0) return null
  return { utc: new Date(v.changesAt).toISOString(), local: zoneOf(v.zone).formatTime(v.changesAt), timezone: v.zone }
}

function domainOf(req: HttpRequest): string {
  const domain = normalizeDomain(req.params.domain ?? '')
  if (domain === undefined || domain === '') throw apiError('API_BAD_PARAM', 'domain must be a domain name', 'domain')
  return domain
}

/** Runs the policy and shapes its verdict; `address` null when judged by user. */
export function explain(ctx: ApiContext, snap: Snapshot, domain: string, address: string | null): CheckAnswer {
  const v = ctx.policy.evaluateSnapshot(snap, new HostKeys(domain), new Verdict(), true, address ?? '')
  const site = ctx.categories.categorize(domain)
  return {
    domain,
    address,
    user: v.user,
    action: v.action,
    step: v.reason,
    matched: v.matched === '' ? null : v.matched,
    ...(v.source === '' ? {} : { source: v.source }),
    categories: v.cats,
    blockedCategories: v.blockedCats,
    site: site === undefined ? null : { domain: site.domain, categories: site.categories },
    target: v.target === '' ? null : v.target,
    schedule: scheduleOf(ctx, v),
    changesAt: changesAtOf(v)
  }
}

/** The verdict for a query naming `clientId`: its user's, or for an unknown ID refused or anonymous. */
function explainClientId(ctx: ApiContext, clientId: string, domain: string, address: string | null): CheckAnswer {
  const snap = ctx.policy.snapshotForClientId(clientId)
  if (snap !== undefined || ctx.unknownClientId === 'anonymous') {
    return { ...explain(ctx, snap ?? ctx.policy.anonymousSnapshot(), domain, address), clientId }
  }
  const site = ctx.categories.categorize(domain)
  return {
    domain,
    address,
    clientId,
    user: null,
    action: 'refuse',
    step: 'unknown-client-id',
    matched: null,
    categories: site?.categories ?? [],
    blockedCategories: [],
    site: site === undefined ? null : { domain: site.domain, categories: site.categories },
    target: null,
    schedule: null,
    changesAt: null
  }
}

/** `?ip=`: the address (null when absent and a client ID is given); 400 when neither is usable. */
function addressParam(req: HttpRequest, hasClientId: boolean): string | null {
  const text = req.searchParams.get('ip')
  if (text === null || text === '') {
    if (hasClientId) return null
    throw apiError('API_BAD_QUERY', 'ip or client-id is required', 'ip')
  }
  const address = normalizeIp(text)
  if (address === undefined) throw apiError('API_BAD_QUERY', `${JSON.stringify(text)} is not an IP address`, 'ip')
  return address
}

/** `?client-id=`: lower case, or null when absent; 400 when it is not a client ID. */
function clientIdParam(req: HttpRequest): string | null {
  const text = req.searchParams.get('client-id')
  if (text === null) return null
  const id = text.toLowerCase()
  if (!isClientId(id)) throw apiError('API_BAD_QUERY', `${JSON.stringify(text)} is not a client ID`, 'client-id')
  return id
}

const DESCRIPTION =
  'Steps in policy order: builtin-whitelist, global-whitelist, global-blacklist, global-allow-only ("-" in the global blacklist), ' +
  'rpz (an RPZ feed of rpz-feeds; matched is its trigger), user-disabled, user-whitelist, user-blacklist, user-allow-only, safesearch, safevideo, category; none when no step matched (forwarded). ' +
  'A user step decided by a scheduled rule inside one of its windows is schedule-whitelist, schedule-blacklist, schedule-allow-only ' +
  'or schedule-category, and `schedule` names the rule and the window; `changesAt` says when the decision may change next. ' +
  'When the deciding entry came from a list subscription or an RPZ feed, `source` names it: list:<subscription id> ' +
  '(step global-blacklist, global-whitelist or category) or rpz:<feed zone> (step rpz). ' +
  'The same code as the DNS server and the block page (engine/policy), on the current policy generation.'

export const checkRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/check/{domain}',
    tag: 'check',
    summary: 'the verdict for a DNS query of domain from address ip, with the policy step and entry that decided',
    description: DESCRIPTION,
    query: [
      {
        name: 'ip',
        description:
          'the client address (required without client-id): its user by exact address or longest prefix, else the server defaults',
        schema: { type: 'string' }
      },
      {
        name: 'client-id',
        description:
          'a client ID (DoH path, DoT server name): its user decides, whatever ip says; an ID no user holds is refused (action refuse, step unknown-client-id) or anonymous, as proxy.unknown-client-id says',
        schema: { type: 'string' }
      }
    ],
    ok: [{ status: 200, description: 'the verdict explained', schema: 'Check' }],
    errors: [400],
    handle(ctx, req, res) {
      const domain = domainOf(req)
      const clientId = clientIdParam(req)
      const address = addressParam(req, clientId !== null)
      ctx.policy.watcher.check()
      if (clientId !== null) res.json(explainClientId(ctx, clientId, domain, address))
      else res.json(explain(ctx, ctx.policy.snapshotFor(address!), domain, address)) // null only with a client ID
    }
  },
  {
    method: 'GET',
    path: '/users/{user_id}/check/{domain}',
    tag: 'check',
    summary: "the verdict for domain under the user's settings, with the policy step and entry that decided",
    description: DESCRIPTION,
    ok: [{ status: 200, description: 'the verdict explained', schema: 'Check' }],
    errors: [400, 404],
    handle(ctx, req, res) {
      const id = userIdOf(req)
      const domain = domainOf(req)
      const snap = ctx.policy.snapshotForUser(id)
      if (snap === undefined) throw apiError('API_USER_NOT_FOUND', `user ${id} does not exist`, 'user_id')
      res.json(explain(ctx, snap, domain, null))
    }
  }
]
