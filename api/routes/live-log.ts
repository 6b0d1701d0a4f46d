/**
 * The live query log as Server-Sent Events (api/live-log.ts): rows of the DNS role's current statistics
 * files as they are written (within about a second), filtered per client. Each row is one `data:` line of
 * JSON; `event: dropped` tells a client that fell behind how many rows it lost; `event: skipped` that the
 * server itself skipped rows (the DNS server wrote faster than they could be read).
 */
import type { HttpRequest } from '../../engine/http/index.js'
import { normalizeDomain } from '../../engine/names/index.js'
import { normalizeIp } from '../../engine/net/index.js'
import { isUserId } from '../context.js'
import { apiError } from '../errors.js'
import { ANONYMOUS, type LiveFilter } from '../live-log.js'
import type { RouteDef } from '../route-table.js'

const MAX_LAST = 1000

function filterOf(req: HttpRequest): { filter: LiveFilter; last: number } {
  const q = req.searchParams
  const filter: LiveFilter = {}
  const user = q.get('user')
  if (user !== null && user !== '') {
    if (user !== ANONYMOUS && !isUserId(user))
      throw apiError('API_BAD_QUERY', 'user must be a user id or *anonymous*', 'user')
    filter.user = user
  }
  const address = q.get('address')
  if (address !== null && address !== '') {
    if (address.endsWith('*')) {
      if (!/^[0-9a-fA-F.:]*\*$/.test(address))
        throw apiError('API_BAD_QUERY', 'address must be an address or an address prefix ending in *', 'address')
      filter.address = address.toLowerCase()
    } else {
      const a = normalizeIp(address)
      if (a === undefined)
        throw apiError('API_BAD_QUERY', 'address must be an address or an address prefix ending in *', 'address')
      filter.address = a
    }
  }
  const blocked = q.get('blocked')
  if (blocked !== null && blocked !== '') {
    if (blocked !== '1' && blocked !== '0' && blocked !== 'true' && blocked !== 'false')
      throw apiError('API_BAD_QUERY', 'blocked must be 1 or 0', 'blocked')
    filter.blockedOnly = blocked === '1' || blocked === 'true'
  }
  const domain = q.get('domain')
  if (domain !== null && domain !== '') {
    // A substring of a name: its characters are a name's (an IDN part is compared as punycode).
    const d = domain.toLowerCase()
    const asName = /^[a-z0-9._-]+$/.test(d) ? d : normalizeDomain(d)
    if (asName === undefined || asName.length > 253)
      throw apiError('API_BAD_QUERY', 'domain must be part of a domain name', 'domain')
    filter.domain = asName
  }
  const lastText = q.get('last')
  let last = 100
  if (lastText !== null && lastText !== '') {
    last = Number(lastText)
    if (!Number.isInteger(last) || last < 0 || last > MAX_LAST)
      throw apiError('API_BAD_QUERY', `last must be an integer from 0 to ${MAX_LAST}`, 'last')
  }
  return { filter, last }
}

export const liveLogRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/live/queries',
    tag: 'live',
    summary: 'the DNS queries as they happen (Server-Sent Events), filtered',
    description:
      'text/event-stream. Each query is one event whose data is JSON: time (ms), address, user (null: anonymous), host, ' +
      'blocked, reason (the policy step), blockedHost, cats, blockedCats, nxdomain, and source (list:<subscription id> or rpz:<feed zone>, ' +
      'only when a list subscription or an RPZ feed gave the deciding entry). First the last `last` matching rows, then new ones ' +
      'within about a second of the query. A client that reads too slowly loses rows and then gets `event: dropped` with ' +
      '{"rows": n}; `event: skipped` {"bytes": n} means the server skipped rows it could not read fast enough. ' +
      'At most 32 streams at once (503 API_TOO_MANY_STREAMS).',
    query: [
      {
        name: 'user',
        description: "only this user's queries (*anonymous*: addresses with no user)",
        schema: { type: 'string' }
      },
      {
        name: 'address',
        description: 'only this client address, or an address prefix ending in *',
        schema: { type: 'string' }
      },
      { name: 'blocked', description: '1: only blocked queries', schema: { enum: ['0', '1'] } },
      { name: 'domain', description: 'only names containing this text', schema: { type: 'string' } },
      {
        name: 'last',
        description: 'recent rows sent first (0 to 1000, default 100)',
        schema: { type: 'integer', minimum: 0, maximum: MAX_LAST }
      }
    ],
    ok: [{ status: 200, description: 'an event stream (text/event-stream) that stays open' }],
    errors: [400, 503],
    async handle(ctx, req, res) {
      const { filter, last } = filterOf(req)
      if (ctx.liveLog.full)
        throw apiError('API_TOO_MANY_STREAMS', 'too many live log streams are open; try again later')
      await ctx.liveLog.ready()
      // No await from here on: the client joins with every row read so far in the backlog.
      const stream = res
        .header('Content-Type', 'text/event-stream; charset=utf-8')
        .header('Cache-Control', 'no-store')
        // Proxies (nginx) would otherwise buffer the stream.
        .header('X-Accel-Buffering', 'no')
        .stream('retry: 3000\n\n')
      ctx.liveLog.join(stream, filter, last)
    }
  }
]
