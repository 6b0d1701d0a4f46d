/** `/config/` (what anonymous addresses get) and `/userconfig/` (what a new user starts from). */
import { bodyOf, checkedCategories } from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'
import { checkedSchedules, withSchedules } from '../schedules.js'

function checkRedirect(text: string): string {
  if (text === '') return text
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw apiError('API_INVALID_BODY', 'safesearchredirect must be an http(s) URL or ""', 'safesearchredirect')
  }
  return text
}

export const defaultsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/config/',
    tag: 'defaults',
    summary: 'the server defaults (anonymous addresses)',
    ok: [{ status: 200, description: 'server defaults', schema: 'ServerDefaults' }],
    errors: [],
    handle(ctx, _req, res) {
      res.json(ctx.store.getServerDefaults())
    }
  },
  {
    method: 'PUT',
    path: '/config/',
    tag: 'defaults',
    summary: 'set the given server defaults; the others keep their value',
    body: 'ServerDefaultsUpdate',
    ok: [{ status: 200, description: 'server defaults as stored', schema: 'ServerDefaults' }],
    errors: [400, 413, 422],
    async handle(ctx, req, res) {
      const body = await bodyOf(req, 'ServerDefaultsUpdate')
      const filter = body.filter === undefined ? undefined : checkedCategories(ctx, body.filter, 'filter')
      const redirect = body.safesearchredirect === undefined ? undefined : checkRedirect(body.safesearchredirect)
      const schedules = body.schedules === undefined ? undefined : checkedSchedules(ctx, body.schedules, 'schedules')
      const next = await ctx.store.write((w) => {
        const cur = w.store.getServerDefaults()
        const value = withSchedules(
          {
            ...cur,
            filter: filter ?? cur.filter,
            safesearch: body.safesearch ?? cur.safesearch,
            safeyoutube: body.safeyoutube ?? cur.safeyoutube,
            safesearchredirect: redirect ?? cur.safesearchredirect
          },
          schedules
        )
        w.putServerDefaults(value)
        return value
      })
      res.json(next)
    }
  },
  {
    method: 'GET',
    path: '/userconfig/',
    tag: 'defaults',
    summary: 'the defaults a new user starts from',
    ok: [{ status: 200, description: 'user defaults', schema: 'UserDefaults' }],
    errors: [],
    handle(ctx, _req, res) {
      res.json(ctx.store.getUserDefaults())
    }
  },
  {
    method: 'PUT',
    path: '/userconfig/',
    tag: 'defaults',
    summary: 'set the given user defaults (existing users are not changed)',
    body: 'UserDefaultsUpdate',
    ok: [{ status: 200, description: 'user defaults as stored', schema: 'UserDefaults' }],
    errors: [400, 413, 422],
    async handle(ctx, req, res) {
      const body = await bodyOf(req, 'UserDefaultsUpdate')
      const filter = body.filter === undefined ? undefined : checkedCategories(ctx, body.filter, 'filter')
      const schedules = body.schedules === undefined ? undefined : checkedSchedules(ctx, body.schedules, 'schedules')
      const next = await ctx.store.write((w) => {
        const cur = w.store.getUserDefaults()
        const value = withSchedules(
          {
            ...cur,
            filter: filter ?? cur.filter,
            safesearch: body.safesearch ?? cur.safesearch,
            safeyoutube: body.safeyoutube ?? cur.safeyoutube
          },
          schedules
        )
        w.putUserDefaults(value)
        return value
      })
      res.json(next)
    }
  }
]
