/**
 * Remote list subscriptions (docs/lists.md): the sources of the config file and those added here, each
 * with its refresh state; add or replace, remove (its entries leave the policy), and refresh now. The
 * sources added here live in the policy store, so with Redis every host sees and refreshes them.
 */
import type { HttpRequest } from '../../engine/http/index.js'
import {
  removeSource,
  sourceProblem,
  SOURCE_ID,
  sourceKey,
  sourceState,
  stateKey,
  storedSource,
  type ListSource,
  type ListState
} from '../../engine/lists/index.js'
import { bodyOf, type ApiContext } from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

const tag = 'lists'

interface SubscriptionView extends ListSource {
  origin: 'config' | 'api'
  state: Omit<ListState, 'entryTarget'> | null
}

function idOf(req: HttpRequest): string {
  const id = req.params.source_id ?? ''
  if (!SOURCE_ID.test(id))
    throw apiError('API_BAD_PARAM', 'source_id must be 1 to 32 of a-z, 0-9, _ and -', 'source_id')
  return id
}

function viewOf(ctx: ApiContext, s: ListSource): SubscriptionView {
  const state = sourceState(ctx.store, s.id)
  let shown: SubscriptionView['state'] = null
  if (state !== undefined) {
    const { entryTarget: _target, ...rest } = state
    shown = rest
  }
  return { ...s, origin: ctx.lists.isConfigSource(s.id) ? 'config' : 'api', state: shown }
}

function sourceOf(ctx: ApiContext, id: string): ListSource {
  const s = ctx.lists.sources().find((x) => x.id === id)
  if (s === undefined) throw apiError('API_SUBSCRIPTION_NOT_FOUND', `no list subscription ${id}`, 'source_id')
  return s
}

function notInConfig(ctx: ApiContext, id: string): void {
  if (ctx.lists.isConfigSource(id))
    throw apiError(
      'API_SUBSCRIPTION_IN_CONFIG',
      `${id} is defined in the config file (lists.sources): change it there`,
      'source_id'
    )
}

export const subscriptionRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/subscriptions/',
    tag,
    summary: 'the list subscriptions, with the state of their last refresh',
    ok: [
      { status: 200, description: 'config sources first, then those added through the API', schema: 'Subscriptions' }
    ],
    errors: [],
    handle(ctx, _req, res) {
      res.json(ctx.lists.sources().map((s) => viewOf(ctx, s)))
    }
  },
  {
    method: 'GET',
    path: '/subscriptions/{source_id}',
    tag,
    summary: 'one list subscription',
    ok: [{ status: 200, description: 'the subscription', schema: 'Subscription' }],
    errors: [400, 404],
    handle(ctx, req, res) {
      res.json(viewOf(ctx, sourceOf(ctx, idOf(req))))
    }
  },
  {
    method: 'PUT',
    path: '/subscriptions/{source_id}',
    tag,
    summary: 'add or replace a list subscription (refreshed within seconds by the api role)',
    description:
      'A changed target moves the entries at the next refresh; a changed URL or format downloads the list whole. A source of the config file cannot be changed here (409).',
    body: 'SubscriptionUpdate',
    ok: [
      { status: 201, description: 'added', schema: 'Subscription' },
      { status: 200, description: 'replaced', schema: 'Subscription' }
    ],
    errors: [400, 409, 413, 422],
    async handle(ctx, req, res) {
      const id = idOf(req)
      const body = await bodyOf(req, 'SubscriptionUpdate')
      notInConfig(ctx, id)
      const problem = sourceProblem(body)
      if (problem !== undefined) throw apiError('API_INVALID_BODY', problem.why, problem.field)
      if (body.category !== undefined && !ctx.taxonomy.has(body.category))
        throw apiError('API_UNKNOWN_CATEGORY', `category ${body.category} does not exist`, 'category')
      const source: ListSource = { id, ...body, enabled: body.enabled ?? true }
      const created = await ctx.store.write((w) => {
        const before = storedSource(w.store, id)
        w.putSubscriptionValue(sourceKey(id), source)
        // A new URL or format is another list: its validators say nothing about it.
        if (before !== undefined && (before.url !== source.url || before.format !== source.format)) {
          const state = sourceState(w.store, id)
          if (state !== undefined) {
            const { etag: _etag, lastModified: _lastModified, ...rest } = state
            w.putSubscriptionValue(stateKey(id), { ...rest, nextDue: 0 })
          }
        }
        return before === undefined
      })
      res.json(viewOf(ctx, source), created ? 201 : 200)
    }
  },
  {
    method: 'DELETE',
    path: '/subscriptions/{source_id}',
    tag,
    summary: 'remove a list subscription and its entries',
    ok: [{ status: 204, description: 'removed' }],
    errors: [400, 404, 409],
    async handle(ctx, req, res) {
      const id = idOf(req)
      notInConfig(ctx, id)
      sourceOf(ctx, id)
      await removeSource(ctx.store, id)
      res.status(204).send()
    }
  },
  {
    method: 'POST',
    path: '/subscriptions/{source_id}/refresh',
    tag,
    summary: 'refresh a list now, whole (without ETag or If-Modified-Since)',
    description:
      'Answers when the refresh is done. With Redis it fetches on the host asked (the timed refreshes take turns); the result reaches every host.',
    ok: [{ status: 200, description: 'what the refresh did', schema: 'RefreshOutcome' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const source = sourceOf(ctx, idOf(req))
      res.json(await ctx.lists.refresh(source, true))
    }
  }
]
