/**
 * "Why is this blocked (or open) for this subscriber?": the verdict the DNS server would give right now,
 * computed by the very `Policy` the DNS server and the block page run (engine/policy), with the step that
 * decided and the list entry or database key that matched. No second implementation: the route only turns
 * the reusable `Verdict` into JSON.
 *
 * `GET /check/{domain}?ip=ADDR` judges by address (exact, then longest prefix, else anonymous), as a DNS
 * query from ADDR is judged. `GET /users/{user_id}/check/{domain}` judges with the user's own settings,
 * whatever its addresses (a user without one can be checked before it is connected).
 */
import { HostKeys, Verdict, type Snapshot } from '../../engine/policy/index.js'
import { normalizeDomain } from '../../engine/names/index.js'
import { normalizeIp } from '../../engine/net/ip.js'
import { zoneOf, type ScheduleWindow } from '../../engine/schedule/index.js'
import type { HttpRequest } from '../../engine/http/index.js'
import { userIdOf, type ApiContext } from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

export interface CheckAnswer {
  domain: string
  address: string | null
  user: string | null
  action: Verdict['action']
  step: Verdict['reason']
  matched: string | null
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
  const v = ctx.policy.evaluateSnapshot(snap, new HostKeys(domain), new Verdict(), true)
  const site = ctx.categories.categorize(domain)
  return {
    domain,
    address,
    user: v.user,
    action: v.action,
    step: v.reason,
    matched: v.matched === '' ? null : v.matched,
    categories: v.cats,
    blockedCategories: v.blockedCats,
    site: site === undefined ? null : { domain: site.domain, categories: site.categories },
    target: v.target === '' ? null : v.target,
    schedule: scheduleOf(ctx, v),
    changesAt: changesAtOf(v)
  }
}

const DESCRIPTION =
  'Steps in policy order: builtin-whitelist, global-whitelist, global-blacklist, global-allow-only ("-" in the global blacklist), ' +
  'user-disabled, user-whitelist, user-blacklist, user-allow-only, safesearch, safevideo, category; none when no step matched (forwarded). ' +
  'A user step decided by a scheduled rule inside one of its windows is schedule-whitelist, schedule-blacklist, schedule-allow-only ' +
  'or schedule-category, and `schedule` names the rule and the window; `changesAt` says when the decision may change next. ' +
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
          'the client address (required): its user by exact address or longest prefix, else the server defaults',
        schema: { type: 'string' }
      }
    ],
    ok: [{ status: 200, description: 'the verdict explained', schema: 'Check' }],
    errors: [400],
    handle(ctx, req, res) {
      const domain = domainOf(req)
      const text = req.searchParams.get('ip')
      if (text === null || text === '') throw apiError('API_BAD_QUERY', 'ip is required', 'ip')
      const address = normalizeIp(text)
      if (address === undefined) throw apiError('API_BAD_QUERY', `${JSON.stringify(text)} is not an IP address`, 'ip')
      ctx.policy.watcher.check()
      res.json(explain(ctx, ctx.policy.snapshotFor(address), domain, address))
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
