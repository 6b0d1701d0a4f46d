/**
 * Users: one user (GET, HEAD, PUT, DELETE), the state switches, and the collection reads (all users by range,
 * active users, search). A PUT may create the user (implicit creation, from `/userconfig/`); fields it leaves
 * out keep their value.
 */
import { normalizeIp, parseCidr } from '../../engine/net/index.js'
import type { UserRecord } from '../../engine/store/index.js'
import {
  bodyOf,
  canonicalAddresses,
  canonicalDomains,
  checkedCategories,
  isUserId,
  requireUser,
  setAddresses,
  userIdOf,
  userOrNew,
  viewOf,
  type ApiContext,
  type Move,
  type UserView
} from '../context.js'
import { apiError } from '../errors.js'
import { canonicalClientIds, setClientIds } from './client-ids.js'
import { checkedSchedules, withSchedules } from '../schedules.js'
import type { RouteDef } from '../route-table.js'

/** GET /users answers the first 100 by default; a range may span at most this many users. */
export const DEFAULT_PAGE = 100
export const MAX_PAGE = 10_000
/** Most users one search answers. */
export const SEARCH_LIMIT = 1000

function rangeParam(ctx: URLSearchParams, name: string): number | undefined {
  const v = ctx.get(name)
  if (v === null) return undefined
  if (!/^\d{1,9}$/.test(v)) throw apiError('API_BAD_QUERY', `${name} must be a non-negative integer`, name)
  return Number(v)
}

function views(ctx: ApiContext, users: Iterable<UserRecord>): UserView[] {
  const out: UserView[] = []
  for (const u of users) out.push(viewOf(ctx.store, u))
  return out
}

/** Owners of addresses matching `query` exactly: the address itself, or the longest prefix holding it. */
function ownersOfAddress(ctx: ApiContext, query: string): string[] {
  if (query.includes('/')) {
    const cidr = parseCidr(query)
    const owner = cidr === undefined ? undefined : ctx.store.ownerOf(cidr.text)
    return owner === undefined ? [] : [owner]
  }
  const ip = normalizeIp(query)
  const owner = ip === undefined ? undefined : ctx.store.userForAddress(ip)
  return owner === undefined ? [] : [owner]
}

function search(ctx: ApiContext, query: string): UserView[] {
  const star = query.indexOf('*')
  const names = new Set<string>()
  if (star >= 0) {
    if (star !== query.length - 1) throw apiError('API_BAD_QUERY', 'the mask "*" may only end the query', 'query')
    const prefix = query.slice(0, -1)
    if (!/^[A-Za-z0-9_.:/-]*$/.test(prefix))
      throw apiError('API_BAD_QUERY', 'a search prefix holds user-name or address characters only', 'query')
    for (const u of ctx.store.usersWithPrefix(prefix, SEARCH_LIMIT)) names.add(u.name)
    // An address prefix is matched on the canonical text (lower-case, compressed IPv6), as stored.
    if (prefix !== '' && /^[0-9a-fA-F.:]+$/.test(prefix)) {
      for (const { user } of ctx.store.addressesWithPrefix(prefix.toLowerCase(), SEARCH_LIMIT)) names.add(user)
    }
  } else {
    const isIp = parseCidr(query) !== undefined
    if (!isIp && !isUserId(query))
      throw apiError('API_BAD_QUERY', 'the query is neither a user name nor an IP address', 'query')
    if (isUserId(query) && ctx.store.hasUser(query)) names.add(query)
    if (isIp) for (const owner of ownersOfAddress(ctx, query)) names.add(owner)
  }
  const out: UserView[] = []
  for (const name of [...names].sort().slice(0, SEARCH_LIMIT)) {
    const u = ctx.store.getUser(name)
    if (u !== undefined) out.push(viewOf(ctx.store, u))
  }
  return out
}

function switchRoute(path: string, summary: string, apply: (u: UserRecord) => UserRecord): RouteDef {
  return {
    method: 'POST',
    path,
    tag: 'users',
    summary,
    description: 'Every other setting is kept. The user must exist (a switch does not create one).',
    ok: [{ status: 200, description: 'the user as stored', schema: 'User' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const user = await ctx.store.write((w) => {
        const next = apply(requireUser(w.store, id))
        w.putUser(next)
        return next
      })
      res.json(viewOf(ctx.store, user))
    }
  }
}

export const userRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/users',
    tag: 'users',
    summary: 'users in a stable order (by name), the first 100 by default',
    query: [
      { name: 'start', description: 'index of the first user (default 0)', schema: { type: 'integer', minimum: 0 } },
      {
        name: 'stop',
        description: `index after the last user (default start + ${DEFAULT_PAGE}; at most start + ${MAX_PAGE})`,
        schema: { type: 'integer', minimum: 0 }
      }
    ],
    ok: [{ status: 200, description: 'User objects', schema: 'Users' }],
    errors: [400],
    handle(ctx, req, res) {
      const start = rangeParam(req.searchParams, 'start') ?? 0
      const stop = rangeParam(req.searchParams, 'stop') ?? start + DEFAULT_PAGE
      if (stop < start) throw apiError('API_BAD_QUERY', 'stop must not be less than start', 'stop')
      if (stop - start > MAX_PAGE) throw apiError('API_BAD_QUERY', `a range holds at most ${MAX_PAGE} users`, 'stop')
      res.json(views(ctx, ctx.store.listUsers(start, stop)))
    }
  },
  {
    method: 'GET',
    path: '/active_users/',
    tag: 'users',
    summary: 'identifiers of the users that have at least one address',
    ok: [{ status: 200, description: 'user identifiers, by name', schema: 'UserIds' }],
    errors: [],
    handle(ctx, _req, res) {
      const out: string[] = []
      for (const u of ctx.store.users()) if (u.ip.length > 0) out.push(u.name)
      res.json(out)
    }
  },
  {
    method: 'GET',
    path: '/search/{query}',
    tag: 'users',
    summary: 'users by exact name or address, or by name or address prefix with a trailing "*"',
    description: `An exact address finds the user owning it, directly or through a prefix holding it. "abc*" matches user names starting with abc, "10.1.*" addresses (canonical text) starting with 10.1.; both kinds are searched and merged. At most ${SEARCH_LIMIT} users, by name.`,
    ok: [{ status: 200, description: 'matching User objects (possibly none)', schema: 'Users' }],
    errors: [400],
    handle(ctx, req, res) {
      res.json(search(ctx, req.params.query ?? ''))
    }
  },
  {
    method: 'GET',
    path: '/users/{user_id}',
    tag: 'users',
    summary: 'one user',
    ok: [{ status: 200, description: 'the User object', schema: 'User' }],
    errors: [400, 404],
    handle(ctx, req, res) {
      res.json(viewOf(ctx.store, requireUser(ctx.store, userIdOf(req))))
    }
  },
  {
    method: 'HEAD',
    path: '/users/{user_id}',
    tag: 'users',
    summary: 'whether the user exists',
    ok: [{ status: 200, description: 'the user exists; the headers (Content-Length too) are those of the GET' }],
    errors: [400, 404],
    handle(ctx, req, res) {
      // The GET's body, which the adapter does not send for HEAD: RFC 9110 §9.3.2 wants the GET's headers.
      res.json(viewOf(ctx.store, requireUser(ctx.store, userIdOf(req))))
    }
  },
  {
    method: 'PUT',
    path: '/users/{user_id}',
    tag: 'users',
    summary: 'create or update a user',
    description:
      'Fields given replace the stored ones; fields left out keep their value (a new user starts from /userconfig/). Addresses held by another user are moved here and listed in `moved`; a client ID held by another user is refused (409).',
    body: 'UserUpdate',
    ok: [
      {
        status: 200,
        description: 'the user as stored, with the addresses moved from other users',
        schema: 'UserWithMoves'
      }
    ],
    errors: [400, 409, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const body = await bodyOf(req, 'UserUpdate')
      if (body.name !== undefined && body.name !== id)
        throw apiError('API_NAME_MISMATCH', 'name must equal the user_id of the path', 'name')
      const filter = body.filter === undefined ? undefined : checkedCategories(ctx, body.filter, 'filter')
      const ip = body.ip === undefined ? undefined : canonicalAddresses(body.ip, 'ip')
      const ids = body.client_ids === undefined ? undefined : canonicalClientIds(body.client_ids, 'client_ids')
      const white = body.whitelist === undefined ? undefined : canonicalDomains(body.whitelist, 'white', 'whitelist')
      const black = body.blacklist === undefined ? undefined : canonicalDomains(body.blacklist, 'black', 'blacklist')
      const schedules = body.schedules === undefined ? undefined : checkedSchedules(ctx, body.schedules, 'schedules')
      const result = await ctx.store.write((w) => {
        let { user } = userOrNew(w, id)
        user = withSchedules(
          {
            ...user,
            safesearch: body.safesearch ?? user.safesearch,
            safeyoutube: body.safeyoutube ?? user.safeyoutube,
            status: body.status ?? user.status,
            filter: filter ?? user.filter
          },
          schedules
        )
        let moved: Move[] = []
        if (ip !== undefined) ({ user, moved } = setAddresses(w, user, ip))
        else w.putUser(user)
        if (ids !== undefined) user = setClientIds(w, user, ids, 'client_ids')
        if (white !== undefined) w.putList(id, 'white', white)
        if (black !== undefined) w.putList(id, 'black', black)
        return { user, moved }
      })
      res.json({ ...viewOf(ctx.store, result.user), moved: result.moved })
    }
  },
  {
    method: 'DELETE',
    path: '/users/{user_id}',
    tag: 'users',
    summary: 'delete a user, its lists and its addresses (they fall back to the server defaults)',
    ok: [{ status: 204, description: 'deleted' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      await ctx.store.write((w) => {
        if (!w.deleteUser(id)) requireUser(w.store, id)
      })
      res.status(204).send()
    }
  },
  switchRoute('/users/{user_id}/status/disabled', 'stop filtering for the user', (u) => ({ ...u, status: 'disabled' })),
  switchRoute('/users/{user_id}/status/enabled', 'resume filtering for the user', (u) => ({ ...u, status: 'enabled' })),
  switchRoute('/users/{user_id}/safesearch/on', 'turn safe search on', (u) => ({ ...u, safesearch: 'on' })),
  switchRoute('/users/{user_id}/safesearch/off', 'turn safe search off', (u) => ({ ...u, safesearch: 'off' }))
]
