/** The categories blocked for a user (its `filter`): numbers that exist in the taxonomy, kept ascending. */
import { bodyOf, checkedCategories, requireUser, sortedUnique, userIdOf, userOrNew } from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

const P = '/users/{user_id}/filter/'

export const filterRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: P,
    tag: 'filter',
    summary: "the user's blocked categories",
    ok: [{ status: 200, description: 'category numbers, ascending', schema: 'Categories' }],
    errors: [400, 404],
    handle(ctx, req, res) {
      res.json(requireUser(ctx.store, userIdOf(req)).filter)
    }
  },
  {
    method: 'POST',
    path: P,
    tag: 'filter',
    summary: 'block more categories (creates the user when it does not exist)',
    body: 'CategoryList',
    ok: [
      { status: 201, description: 'the user was created; its blocked categories', schema: 'Categories' },
      { status: 200, description: 'the blocked categories', schema: 'Categories' }
    ],
    errors: [400, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const added = checkedCategories(ctx, await bodyOf(req, 'CategoryList'))
      const r = await ctx.store.write((w) => {
        const { user, created } = userOrNew(w, id)
        const filter = sortedUnique([...user.filter, ...added])
        w.putUser({ ...user, filter })
        return { filter, created }
      })
      res.json(r.filter, r.created ? 201 : 200)
    }
  },
  {
    method: 'PUT',
    path: P,
    tag: 'filter',
    summary: 'replace the blocked categories (creates the user when it does not exist)',
    body: 'CategoryList',
    ok: [{ status: 200, description: 'the blocked categories', schema: 'Categories' }],
    errors: [400, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const filter = checkedCategories(ctx, await bodyOf(req, 'CategoryList'))
      await ctx.store.write((w) => {
        w.putUser({ ...userOrNew(w, id).user, filter })
      })
      res.json(filter)
    }
  },
  {
    method: 'DELETE',
    path: P,
    tag: 'filter',
    summary: 'unblock every category',
    ok: [{ status: 204, description: 'cleared' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      await ctx.store.write((w) => {
        w.putUser({ ...requireUser(w.store, id), filter: [] })
      })
      res.status(204).send()
    }
  },
  {
    method: 'DELETE',
    path: P + '{category}',
    tag: 'filter',
    summary: 'unblock one category',
    ok: [{ status: 204, description: 'removed' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const text = req.params.category ?? ''
      if (!/^\d{1,5}$/.test(text)) throw apiError('API_BAD_PARAM', 'category must be a category number', 'category')
      const n = Number(text)
      await ctx.store.write((w) => {
        const user = requireUser(w.store, id)
        if (!user.filter.includes(n))
          throw apiError('API_ENTRY_NOT_FOUND', `category ${n} is not blocked for user ${id}`, 'category')
        w.putUser({ ...user, filter: user.filter.filter((c) => c !== n) })
      })
      res.status(204).send()
    }
  }
]
