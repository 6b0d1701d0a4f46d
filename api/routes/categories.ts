/** The taxonomy (in the configured language) and the site lookup in the category database. */
import { normalizeDomain } from '../../engine/names/index.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

export const categoryRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/categorygroups/',
    tag: 'categories',
    summary: 'category groups with their categories, in the configured language',
    ok: [{ status: 200, description: 'Category group records', schema: 'CategoryGroups' }],
    errors: [],
    handle (ctx, _req, res) { res.json(ctx.taxonomy.groupRecords) }
  },
  {
    method: 'GET',
    path: '/categories/',
    tag: 'categories',
    summary: 'every category number with its name, in the configured language',
    ok: [{ status: 200, description: 'number → name', schema: 'CategoryNames' }],
    errors: [],
    handle (ctx, _req, res) { res.json(ctx.taxonomy.categories) }
  },
  {
    method: 'GET',
    path: '/site/{host}',
    tag: 'categories',
    summary: 'the site record of a host: the database key that matched (the host or a parent) and its categories',
    ok: [{ status: 200, description: 'Site record', schema: 'Site' }],
    errors: [400, 404],
    handle (ctx, req, res) {
      const host = normalizeDomain(req.params.host ?? '')
      if (host === undefined) throw apiError('API_BAD_PARAM', 'host must be a domain name', 'host')
      // Follows a rebuilt database (one meta read when nothing changed).
      ctx.categories.refresh()
      const site = ctx.categories.categorize(host)
      if (site === undefined) throw apiError('API_SITE_NOT_FOUND', `${host} is not in the category database`, 'host')
      res.json(site)
    }
  }
]
