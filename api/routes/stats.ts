/**
 * The statistics reports (filtering-server.md, Statistics): chart-style objects built from the aggregates the
 * importer keeps in the statistics store (engine/stats, DuckDB). Dates are local dates in `stats.timezone` (UTC by default). The reserved name
 * of addresses with no user (`*anonymous*`, engine/stats ANONYMOUS_USER) is accepted as a user id here: it
 * can never be a real one, so its reports cannot be confused with a user's.
 *
 * Errors: a malformed user id 400 `API_BAD_USER_ID`; an unknown user 404 `API_USER_NOT_FOUND`; a missing or
 * malformed date, `from` after `to`, or a date outside what is kept (before three months ago, after today)
 * 400 `API_BAD_QUERY` naming the parameter; a filter other than `all`/`www` 400 `API_BAD_PARAM`.
 */
import type { HttpRequest } from '../../engine/http/index.js'
import {
  formatDay,
  parseDay,
  RAW_EXTRA_FIELDS,
  type DomainFilter,
  type RawExtraField
} from '../../engine/stats/index.js'
import { ANONYMOUS_USER } from '../../engine/querylog/index.js'
import { requireUser, userIdOf, type ApiContext, type StatsContext } from '../context.js'
import { apiError } from '../errors.js'
import type { Outcome, QueryParam, RouteDef } from '../route-table.js'

const DATE = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }
export const RANGE: readonly QueryParam[] = [
  {
    name: 'from',
    description:
      'first day, YYYY-MM-DD in stats.timezone (required; at most stats.retention-months back, three by default)',
    schema: DATE
  },
  { name: 'to', description: 'last day, YYYY-MM-DD (required; not after today, not before from)', schema: DATE }
]

/** The user whose report is asked for: a real user, or the reserved name of the addresses with no user. */
function reportUser(ctx: ApiContext, req: HttpRequest): string {
  if (req.params.user_id === ANONYMOUS_USER) return ANONYMOUS_USER
  return requireUser(ctx.store, userIdOf(req)).name
}

const WITH_PARAM: QueryParam = {
  name: 'with',
  description:
    "fields to add after the specification's eight, comma-separated: source (the reason's detail, list:<id> " +
    "for a list subscription, rpz:<zone> for an RPZ feed, '' otherwise). Without it the answer has the eight fields only",
  schema: { type: 'string' }
}

/** The raw report's extra fields `?with=` names (none when absent). */
function rawExtraOf(req: HttpRequest): RawExtraField[] {
  const text = req.searchParams.get('with')
  if (text === null || text === '') return []
  const names = text.split(',')
  const known = (n: string): n is RawExtraField => (RAW_EXTRA_FIELDS as readonly string[]).includes(n)
  const bad = names.find((n) => !known(n))
  if (bad !== undefined)
    throw apiError('API_BAD_QUERY', `with names fields to add: ${RAW_EXTRA_FIELDS.join(', ')} (not ${bad})`, 'with')
  return names.filter(known)
}

function filterOf(req: HttpRequest): DomainFilter {
  const filter = req.params.filter
  if (filter !== 'all' && filter !== 'www') throw apiError('API_BAD_PARAM', 'filter must be all or www', 'filter')
  return filter
}

/** `from` and `to` as day numbers, checked against what is kept. */
export function rangeOf(stats: StatsContext, req: HttpRequest): [number, number] {
  const t = stats.now()
  const first = stats.time.aggregateRetentionStart(t, stats.reports.retention.months)
  const today = stats.time.dayOf(t)
  const day = (name: 'from' | 'to'): number => {
    const text = req.searchParams.get(name)
    if (text === null || text === '') throw apiError('API_BAD_QUERY', `${name} is required (YYYY-MM-DD)`, name)
    const d = parseDay(text)
    if (d === undefined) throw apiError('API_BAD_QUERY', `${name} must be a date YYYY-MM-DD`, name)
    if (d < first || d > today) {
      throw apiError(
        'API_BAD_QUERY',
        `${name} is outside the statistics kept: ${formatDay(first)} to ${formatDay(today)} (${stats.time.timeZone})`,
        name
      )
    }
    return d
  }
  const from = day('from')
  const to = day('to')
  if (from > to) throw apiError('API_BAD_QUERY', 'from is after to', 'from')
  return [from, to]
}

const USER_NOTE =
  'user_id may also be the reserved name *anonymous* (percent-encoded or not): the addresses with no user.'

/**
 * A report over the days `from`..`to`. The checks run in a fixed order: the user (404 whatever else
 * is wrong), then the route's own path parameter (`param`), then the dates.
 */
function rangeReport<P = undefined>(
  path: string,
  summary: string,
  ok: Outcome,
  description: string,
  report: (stats: StatsContext, user: string, from: number, to: number, param: P) => Promise<unknown>,
  param?: (req: HttpRequest) => P
): RouteDef {
  return {
    method: 'GET',
    path,
    tag: 'statistics',
    summary,
    description,
    query: RANGE,
    ok: [ok],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const user = reportUser(ctx, req)
      const p = param?.(req) as P
      const [from, to] = rangeOf(ctx.stats, req)
      res.json(await report(ctx.stats, user, from, to, p))
    }
  }
}

export const statsRoutes: RouteDef[] = [
  rangeReport(
    '/users/{user_id}/stat/activity/hour',
    'requests and blocks per hour of the user (all its addresses summed)',
    { status: 200, description: 'one label per hour of the range', schema: 'Chart' },
    USER_NOTE,
    (stats, user, from, to) => stats.reports.activityByHour(stats.time, user, from, to)
  ),
  rangeReport(
    '/users/{user_id}/stat/activity/day',
    'requests and blocks per day of the user',
    { status: 200, description: 'one label per day of the range', schema: 'Chart' },
    USER_NOTE,
    (stats, user, from, to) => stats.reports.activityByDay(user, from, to)
  ),
  rangeReport(
    '/users/{user_id}/stat/domains/{filter}',
    "the user's top 100 domains of the range: requests, NXDOMAIN answers and blocks",
    { status: 200, description: 'one label per domain, most requested first', schema: 'Chart' },
    `filter: all, or www (only names that start with "www."). ${USER_NOTE}`,
    (stats, user, from, to, filter) => stats.reports.topDomains(user, from, to, filter),
    filterOf
  ),
  rangeReport(
    '/users/{user_id}/stat/detail',
    "per day of the range, the user's top domains with their categories",
    { status: 200, description: 'timestamps (days) and one report per day', schema: 'Detail' },
    USER_NOTE,
    (stats, user, from, to) => stats.reports.detail(user, from, to)
  ),
  {
    method: 'GET',
    path: '/users/{user_id}/stat/raw',
    tag: 'statistics',
    summary: "the user's queries of the last hour, one row each",
    description: USER_NOTE,
    query: [WITH_PARAM],
    ok: [{ status: 200, description: 'field names and rows', schema: 'RawReport' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const user = reportUser(ctx, req)
      const extra = rawExtraOf(req)
      res.json(await ctx.stats.reports.rawLastHour(ctx.stats.time, user, ctx.stats.now(), extra))
    }
  }
]
