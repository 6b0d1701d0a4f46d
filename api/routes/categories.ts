/**
 * The taxonomy (in the configured language, or the one asked with `?lang=`, so the console names
 * categories in its own language) and the site lookup in the category database.
 */
import type { Taxonomy } from '../../engine/categories/index.js'
import type { HttpRequest, HttpResponse } from '../../engine/http/index.js'
import { normalizeDomain } from '../../engine/names/index.js'
import type { ApiContext } from '../context.js'
import { apiError } from '../errors.js'
import type { QueryParam, RouteDef } from '../route-table.js'

const LANG_PARAM: QueryParam = {
  name: 'lang',
  description:
    'ru or en: the names in this language (default: datafiles.language); a language whose file is missing ' +
    'falls back to the configured one. Content-Language says which was served.',
  schema: { enum: ['ru', 'en'] }
}

/** The taxonomy `?lang=` asks for (the configured one when absent), and says which it is. */
function taxonomyOf(ctx: ApiContext, req: HttpRequest, res: HttpResponse): Taxonomy {
  const lang = req.searchParams.get('lang')
  if (lang !== null && lang !== '' && lang !== 'ru' && lang !== 'en')
    throw apiError('API_BAD_QUERY', 'lang must be ru or en', 'lang')
  const tax = ctx.taxonomyIn(lang === null || lang === '' ? undefined : lang)
  res.header('Content-Language', tax.lang)
  return tax
}

export const categoryRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/categorygroups/',
    tag: 'categories',
    summary: 'category groups with their categories, in the configured language or the one asked',
    query: [LANG_PARAM],
    ok: [{ status: 200, description: 'Category group records', schema: 'CategoryGroups' }],
    errors: [400],
    handle(ctx, req, res) {
      res.json(taxonomyOf(ctx, req, res).groupRecords)
    }
  },
  {
    method: 'GET',
    path: '/categories/',
    tag: 'categories',
    summary: 'every category number with its name, in the configured language or the one asked',
    query: [LANG_PARAM],
    ok: [{ status: 200, description: 'number → name', schema: 'CategoryNames' }],
    errors: [400],
    handle(ctx, req, res) {
      res.json(taxonomyOf(ctx, req, res).categories)
    }
  },
  {
    method: 'GET',
    path: '/site/{host}',
    tag: 'categories',
    summary: 'the site record of a host: the database key that matched (the host or a parent) and its categories',
    ok: [{ status: 200, description: 'Site record', schema: 'Site' }],
    errors: [400, 404],
    handle(ctx, req, res) {
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
