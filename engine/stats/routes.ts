/**
 * The statistics endpoints of the management API, mounted on the api role's HTTP server:
 *
 *   GET /users/{user_id}/stat/activity/hour?from=YYYY-MM-DD&to=YYYY-MM-DD
 *   GET /users/{user_id}/stat/activity/day?from=&to=
 *   GET /users/{user_id}/stat/domains/{all|www}?from=&to=
 *   GET /users/{user_id}/stat/detail?from=&to=
 *   GET /users/{user_id}/stat/raw
 *
 * Dates are local dates in `stats.timezone` (UTC by default). Errors use the management API's
 * codes and body (`{"error":{"code","message","field"}}`): a malformed user id 400
 * `API_BAD_USER_ID`; a user the store does not know 404 `API_USER_NOT_FOUND` (the reserved
 * ANONYMOUS_USER is always known); a missing or malformed date, `from` after `to`, or a date outside
 * the retention window (before three months ago, after today) 400 `API_BAD_QUERY` naming the
 * parameter; a filter other than `all`/`www` 400 `API_BAD_PARAM`.
 */
import { HttpError, type HttpRequest, type HttpServer } from '../http/index.js'
import type { Config } from '../config/types.js'
import type { Store } from '../store/index.js'
import type { StatsDb } from './db.js'
import { ANONYMOUS_USER } from './files.js'
import { activityByDay, activityByHour, detail, rawLastHour, topDomains } from './reports.js'
import { ReportTime, formatDay, parseDay } from './time.js'

export interface StatsRoutesContext {
  readonly statsDb: StatsDb
  /** Only `hasUser` is used. */
  readonly store: Pick<Store, 'hasUser'>
  readonly config: Readonly<Config>
  /** Clock (ms); default `Date.now`. */
  readonly now?: () => number
  /** Called first on every request, e.g. the api role's access check; throw an HttpError to refuse. */
  readonly guard?: (req: HttpRequest) => void
}

const USER_ID = /^[A-Za-z0-9_-]{1,32}$/

/** Mounts the five statistics routes on `server`. */
export function registerStatsRoutes (server: HttpServer, ctx: StatsRoutesContext): void {
  const time = new ReportTime(ctx.config.stats.timezone)
  const now = ctx.now ?? Date.now
  const { statsDb: db } = ctx

  const userOf = (req: HttpRequest): string => {
    ctx.guard?.(req)
    const id = req.params.user_id ?? ''
    if (id === ANONYMOUS_USER) return id
    if (!USER_ID.test(id)) {
      throw new HttpError(400, 'API_BAD_USER_ID', 'user_id must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -', { field: 'user_id' })
    }
    if (!ctx.store.hasUser(id)) throw new HttpError(404, 'API_USER_NOT_FOUND', `user ${id} does not exist`, { field: 'user_id' })
    return id
  }

  const rangeOf = (req: HttpRequest): [number, number] => {
    const t = now()
    const first = time.aggregateRetentionStart(t)
    const today = time.dayOf(t)
    const day = (name: 'from' | 'to'): number => {
      const text = req.searchParams.get(name)
      if (text === null || text === '') throw badQuery(`${name} is required (YYYY-MM-DD)`, name)
      const d = parseDay(text)
      if (d === undefined) throw badQuery(`${name} must be a date YYYY-MM-DD`, name)
      if (d < first || d > today) {
        throw badQuery(`${name} is outside the statistics kept: ${formatDay(first)} to ${formatDay(today)} (${time.timeZone})`, name)
      }
      return d
    }
    const from = day('from')
    const to = day('to')
    if (from > to) throw badQuery('from is after to', 'from')
    return [from, to]
  }

  server.route('GET', '/users/:user_id/stat/activity/hour', (req, res) => {
    const user = userOf(req)
    const [from, to] = rangeOf(req)
    res.json(activityByHour(db, time, user, from, to))
  })
  server.route('GET', '/users/:user_id/stat/activity/day', (req, res) => {
    const user = userOf(req)
    const [from, to] = rangeOf(req)
    res.json(activityByDay(db, user, from, to))
  })
  server.route('GET', '/users/:user_id/stat/domains/:filter', (req, res) => {
    const user = userOf(req)
    const filter = req.params.filter
    if (filter !== 'all' && filter !== 'www') throw new HttpError(400, 'API_BAD_PARAM', 'filter must be all or www', { field: 'filter' })
    const [from, to] = rangeOf(req)
    res.json(topDomains(db, user, from, to, filter))
  })
  server.route('GET', '/users/:user_id/stat/detail', (req, res) => {
    const user = userOf(req)
    const [from, to] = rangeOf(req)
    res.json(detail(db, user, from, to))
  })
  server.route('GET', '/users/:user_id/stat/raw', (req, res) => {
    const user = userOf(req)
    res.json(rawLastHour(db, time, user, now()))
  })
}

function badQuery (message: string, field: string): HttpError {
  return new HttpError(400, 'API_BAD_QUERY', message, { field })
}
