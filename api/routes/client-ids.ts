/**
 * A user's client IDs (docs/dns.md, "Subscriber identity"): the names an encrypted DNS client gives in the DoH
 * path (`/dns-query/{client-id}`) or as the first label of the DoT server name (`{client-id}.dot.example`), by
 * which the DNS server finds the user whatever address the query comes from. Unlike an address, an ID is never
 * moved from one user to another: an ID another user holds is refused (409 API_CLIENT_ID_TAKEN), because moving
 * it would silently put another subscriber's devices under this user's policy.
 */
import { randomBytes } from 'node:crypto'
import type { StoreWriter, UserRecord } from '../../engine/store/index.js'
import { bodyOf, requireUser, userIdOf, userOrNew } from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

/** One DNS label of letters, digits and `-`, not starting or ending with `-` (RFC 1123 host name label). */
const CLIENT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Whether `text` (already lower case) is a client ID. */
export function isClientId(text: string): boolean {
  return CLIENT_ID.test(text)
}

/** Client IDs lower-cased, duplicates dropped, order kept; 422 `API_INVALID_CLIENT_ID` naming the first bad one. */
export function canonicalClientIds(list: readonly string[], field = ''): string[] {
  const out = new Set<string>()
  for (let i = 0; i < list.length; i++) {
    const id = list[i]!.toLowerCase()
    if (!CLIENT_ID.test(id)) {
      throw apiError(
        'API_INVALID_CLIENT_ID',
        `${JSON.stringify(list[i])} is not a client ID: 1 to 63 letters, digits and "-", not starting or ending with "-"`,
        `${field}[${i}]`
      )
    }
    out.add(id)
  }
  return [...out]
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/**
 * A new client ID nobody can guess: 20 characters of base32 (100 random bits), a valid DNS label. An ID is
 * the only thing that names its user over DoH or DoT (no password goes with it), so a guessable one
 * (`kid-phone`) lets anyone who tries it be filtered, and counted in the statistics, as that user.
 */
export function randomClientId(): string {
  const bytes = randomBytes(20)
  let id = ''
  for (const b of bytes) id += BASE32[b & 31]
  return id
}

/** One client ID from the path: 400 `API_BAD_PARAM` when it is not one. */
function clientIdParam(text: string): string {
  const id = text.toLowerCase()
  if (!CLIENT_ID.test(id)) throw apiError('API_BAD_PARAM', `${JSON.stringify(text)} is not a client ID`, 'client_id')
  return id
}

/**
 * Inside a write: makes `ids` exactly the user's client IDs and stores the user. An ID another user holds
 * throws 409 `API_CLIENT_ID_TAKEN` naming its element of `field` (the write is rolled back).
 */
export function setClientIds(w: StoreWriter, user: UserRecord, ids: readonly string[], field: string): UserRecord {
  const taken = w.setClientIds(user.name, ids)
  if (taken.length > 0) {
    const { clientId, owner } = taken[0]!
    throw apiError(
      'API_CLIENT_ID_TAKEN',
      `client ID ${clientId} belongs to user ${owner}: remove it there first`,
      `${field}[${ids.indexOf(clientId)}]`
    )
  }
  const next: UserRecord = { ...user, client_ids: [...ids] }
  w.putUser(next)
  return next
}

const P = '/users/{user_id}/client-ids/'
const ANSWER = [{ status: 200, description: "the user's client IDs", schema: 'ClientIds' }] as const

export const clientIdRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: P,
    tag: 'client-ids',
    summary: "the user's client IDs (DoH path, DoT server name)",
    ok: ANSWER,
    errors: [400, 404],
    handle(ctx, req, res) {
      res.json(requireUser(ctx.store, userIdOf(req)).client_ids ?? [])
    }
  },
  {
    method: 'POST',
    path: P,
    tag: 'client-ids',
    summary: 'add client IDs (creates the user when it does not exist); without a body, one new random ID',
    description:
      'With a body, the IDs it lists are added. Without one (Content-Type: application/json, nothing sent), the server ' +
      'makes one new random ID (20 characters of a-z and 2-7: 100 random bits) and adds it: the answer lists the ' +
      "user's IDs with the new one last. An ID carries no secret with it: a random one is what cannot be guessed.",
    body: 'ClientIdList',
    bodyOptional: true,
    ok: [{ status: 201, description: 'the user was created; its client IDs', schema: 'ClientIds' }, ...ANSWER],
    errors: [400, 409, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const added =
        (await req.body()).length === 0 ? [randomClientId()] : canonicalClientIds(await bodyOf(req, 'ClientIdList'))
      const r = await ctx.store.write((w) => {
        const { user, created } = userOrNew(w, id)
        const all = [...new Set([...(user.client_ids ?? []), ...added])]
        return { ids: setClientIds(w, user, all, '').client_ids ?? [], created }
      })
      res.json(r.ids, r.created ? 201 : 200)
    }
  },
  {
    method: 'PUT',
    path: P,
    tag: 'client-ids',
    summary: 'replace the client IDs (creates the user when it does not exist)',
    body: 'ClientIdList',
    ok: ANSWER,
    errors: [400, 409, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const list = canonicalClientIds(await bodyOf(req, 'ClientIdList'))
      const ids = await ctx.store.write((w) => setClientIds(w, userOrNew(w, id).user, list, '').client_ids ?? [])
      res.json(ids)
    }
  },
  {
    method: 'DELETE',
    path: P,
    tag: 'client-ids',
    summary: 'remove every client ID of the user (its settings are kept)',
    ok: [{ status: 204, description: 'removed' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      await ctx.store.write((w) => setClientIds(w, requireUser(w.store, id), [], ''))
      res.status(204).send()
    }
  },
  {
    method: 'DELETE',
    path: P + '{client_id}',
    tag: 'client-ids',
    summary: 'remove one client ID',
    ok: [{ status: 204, description: 'removed' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const clientId = clientIdParam(req.params.client_id ?? '')
      await ctx.store.write((w) => {
        const user = requireUser(w.store, id)
        const ids = user.client_ids ?? []
        if (!ids.includes(clientId))
          throw apiError('API_ENTRY_NOT_FOUND', `${clientId} is not a client ID of user ${id}`, 'client_id')
        setClientIds(
          w,
          user,
          ids.filter((c) => c !== clientId),
          ''
        )
      })
      res.status(204).send()
    }
  }
]
