/**
 * A user's addresses. An address (or prefix) belongs to at most one user: adding it here takes it from its
 * previous owner, and the answer lists those moves. Removing addresses unmaps them at once, so their DNS
 * traffic gets the server defaults from the next generation the DNS server reads.
 */
import {
  bodyOf,
  canonicalAddressParam,
  canonicalAddresses,
  requireUser,
  setAddresses,
  userIdOf,
  userOrNew
} from '../context.js'
import { apiError } from '../errors.js'
import type { RouteDef } from '../route-table.js'

const P = '/users/{user_id}/ip/'

export const addressRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: P,
    tag: 'addresses',
    summary: "the user's addresses and prefixes",
    ok: [{ status: 200, description: 'canonical addresses', schema: 'Addresses' }],
    errors: [400, 404],
    handle(ctx, req, res) {
      res.json(requireUser(ctx.store, userIdOf(req)).ip)
    }
  },
  {
    method: 'POST',
    path: P,
    tag: 'addresses',
    summary: 'add addresses (creates the user when it does not exist)',
    body: 'AddressList',
    ok: [
      { status: 201, description: 'the user was created; its addresses and the moves', schema: 'AddressesWithMoves' },
      { status: 200, description: "the user's addresses and the moves", schema: 'AddressesWithMoves' }
    ],
    errors: [400, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const added = canonicalAddresses(await bodyOf(req, 'AddressList'))
      const r = await ctx.store.write((w) => {
        const { user, created } = userOrNew(w, id)
        const all = [...new Set([...user.ip, ...added])]
        const { user: next, moved } = setAddresses(w, user, all)
        return { ip: next.ip, moved, created }
      })
      res.json({ ip: r.ip, moved: r.moved }, r.created ? 201 : 200)
    }
  },
  {
    method: 'PUT',
    path: P,
    tag: 'addresses',
    summary: 'replace the addresses (creates the user when it does not exist)',
    description: 'Addresses no longer listed fall back to the server defaults; an empty array disconnects the user.',
    body: 'AddressList',
    ok: [{ status: 200, description: "the user's addresses and the moves", schema: 'AddressesWithMoves' }],
    errors: [400, 413, 422],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      const list = canonicalAddresses(await bodyOf(req, 'AddressList'))
      const r = await ctx.store.write((w) => {
        const { user: next, moved } = setAddresses(w, userOrNew(w, id).user, list)
        return { ip: next.ip, moved }
      })
      res.json(r)
    }
  },
  {
    method: 'DELETE',
    path: P,
    tag: 'addresses',
    summary: 'remove every address: the user is disconnected from the service (settings are kept)',
    ok: [{ status: 204, description: 'removed' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      await ctx.store.write((w) => {
        setAddresses(w, requireUser(w.store, id), [])
      })
      res.status(204).send()
    }
  },
  {
    method: 'DELETE',
    path: P + '{ip}',
    tag: 'addresses',
    summary: 'remove one address',
    aliases: ['/users/:user_id/ip/:ip/:prefixlen'],
    ok: [{ status: 204, description: 'removed' }],
    errors: [400, 404],
    async handle(ctx, req, res) {
      const id = userIdOf(req)
      // The alias takes a prefix whose "/" was sent unencoded: /users/u/ip/10.0.0.0/24.
      const raw =
        req.params.prefixlen === undefined ? (req.params.ip ?? '') : `${req.params.ip ?? ''}/${req.params.prefixlen}`
      const address = canonicalAddressParam(raw, 'ip')
      await ctx.store.write((w) => {
        const user = requireUser(w.store, id)
        if (!user.ip.includes(address))
          throw apiError('API_ENTRY_NOT_FOUND', `${address} is not an address of user ${id}`, 'ip')
        setAddresses(
          w,
          user,
          user.ip.filter((a) => a !== address)
        )
      })
      res.status(204).send()
    }
  }
]
