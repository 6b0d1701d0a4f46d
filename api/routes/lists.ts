/**
 * The four list families (user and global, black and white), five verbs each, from one definition. Entries
 * are keyed like the category database (lower case, punycode, no trailing dot) so they match what the DNS
 * server looks up; `-` is the allow-only entry of a blacklist. User lists create the user when it does not
 * exist (a list is a property of the user); global lists always exist.
 */
import type { HttpRequest } from '../../engine/http/index.js'
import type { ListKind, ListScope } from '../../engine/store/index.js'
import { ALLOW_ONLY } from '../../engine/policy/index.js'
import {
  bodyOf,
  canonicalDomainParam,
  canonicalDomains,
  requireUser,
  userIdOf,
  userOrNew,
  type ApiContext
} from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

interface Family {
  readonly prefix: string
  readonly kind: ListKind
  readonly perUser: boolean
  readonly label: string
}

const FAMILIES: readonly Family[] = [
  { prefix: '/users/{user_id}/blacklist/', kind: 'black', perUser: true, label: 'user blacklist' },
  { prefix: '/users/{user_id}/whitelist/', kind: 'white', perUser: true, label: 'user whitelist' },
  { prefix: '/blacklist/', kind: 'black', perUser: false, label: 'global blacklist' },
  { prefix: '/whitelist/', kind: 'white', perUser: false, label: 'global whitelist' }
]

/** The list's scope; for a user list that must exist already, 404 when the user does not. */
function scopeOf(ctx: ApiContext, f: Family, req: HttpRequest, mustExist: boolean): ListScope {
  if (!f.perUser) return null
  const id = userIdOf(req)
  if (mustExist) requireUser(ctx.store, id)
  return id
}

const tag = 'lists'

function routesOf(f: Family): RouteDef[] {
  return [...readAndWriteRoutes(f), ...deleteRoutes(f)]
}

/** GET, POST (add) and PUT (replace) of a list. */
function readAndWriteRoutes(f: Family): RouteDef[] {
  const allowOnly =
    f.kind === 'black'
      ? ' The single entry "-" makes everything forbidden except what the whitelists pass.'
      : ' "-" is refused (422): it belongs in a blacklist.'
  return [
    {
      method: 'GET',
      path: f.prefix,
      tag,
      summary: `the ${f.label}`,
      ok: [{ status: 200, description: 'entries in the order they were added', schema: 'Domains' }],
      errors: f.perUser ? [400, 404] : [],
      handle(ctx, req, res) {
        res.json(ctx.store.getList(scopeOf(ctx, f, req, true), f.kind))
      }
    },
    {
      method: 'POST',
      path: f.prefix,
      tag,
      summary: `add entries to the ${f.label}` + (f.perUser ? ' (creates the user when it does not exist)' : ''),
      description: 'Entries already present are kept once.' + allowOnly,
      body: 'DomainList',
      ok: f.perUser
        ? [
            { status: 201, description: 'the user was created; the list', schema: 'Domains' },
            { status: 200, description: 'the list', schema: 'Domains' }
          ]
        : [{ status: 200, description: 'the list', schema: 'Domains' }],
      errors: [400, 413, 422],
      async handle(ctx, req, res) {
        const scope = scopeOf(ctx, f, req, false)
        const added = canonicalDomains(await bodyOf(req, 'DomainList'), f.kind)
        const r = await ctx.store.write((w) => {
          let created = false
          if (scope !== null) {
            const u = userOrNew(w, scope)
            if (u.created) w.putUser(u.user)
            created = u.created
          }
          const list = [...new Set([...w.store.getList(scope, f.kind), ...added])]
          w.putList(scope, f.kind, list)
          return { list, created }
        })
        res.json(r.list, r.created ? 201 : 200)
      }
    },
    {
      method: 'PUT',
      path: f.prefix,
      tag,
      summary: `replace the ${f.label}` + (f.perUser ? ' (creates the user when it does not exist)' : ''),
      description: allowOnly.trim(),
      body: 'DomainList',
      ok: [{ status: 200, description: 'the list', schema: 'Domains' }],
      errors: [400, 413, 422],
      async handle(ctx, req, res) {
        const scope = scopeOf(ctx, f, req, false)
        const list = canonicalDomains(await bodyOf(req, 'DomainList'), f.kind)
        await ctx.store.write((w) => {
          if (scope !== null) {
            const { user, created } = userOrNew(w, scope)
            if (created) w.putUser(user)
          }
          w.putList(scope, f.kind, list)
        })
        res.json(list)
      }
    }
  ]
}

/** DELETE of the whole list and of one entry. */
function deleteRoutes(f: Family): RouteDef[] {
  const userErrors = f.perUser ? [400, 404] : []
  return [
    {
      method: 'DELETE',
      path: f.prefix,
      tag,
      summary: `empty the ${f.label}`,
      ok: [{ status: 204, description: 'emptied' }],
      errors: userErrors,
      async handle(ctx, req, res) {
        const scope = scopeOf(ctx, f, req, false)
        await ctx.store.write((w) => {
          if (scope !== null) requireUser(w.store, scope)
          w.putList(scope, f.kind, [])
        })
        res.status(204).send()
      }
    },
    {
      method: 'DELETE',
      path: f.prefix + '{domain}',
      tag,
      summary: `remove one entry from the ${f.label}` + (f.kind === 'black' ? ' ("-" ends allow-only mode)' : ''),
      ok: [{ status: 204, description: 'removed' }],
      errors: [400, 404],
      async handle(ctx, req, res) {
        const scope = scopeOf(ctx, f, req, false)
        const entry = canonicalDomainParam(req.params.domain ?? '', f.kind)
        await ctx.store.write((w) => {
          if (scope !== null) requireUser(w.store, scope)
          const list = w.store.getList(scope, f.kind)
          if (!list.includes(entry)) {
            throw apiError(
              'API_ENTRY_NOT_FOUND',
              `${entry === ALLOW_ONLY ? 'the allow-only entry "-"' : entry} is not in the ${f.label}`,
              'domain'
            )
          }
          w.putList(
            scope,
            f.kind,
            list.filter((e) => e !== entry)
          )
        })
        res.status(204).send()
      }
    }
  ]
}

export const listRoutes: RouteDef[] = FAMILIES.flatMap(routesOf)
