/**
 * What stands in front of the handlers on each listener: the registered listener's credentials (HTTP Basic
 * or Bearer, the verification cached per header, every request counted for billing) and the anonymous
 * listener's per-address limit. Both notice store writes before the handler runs.
 */
import type { Handler } from '../engine/http/index.js'
import { ipBytes } from '../engine/net/index.js'
import { retryAfterSeconds, type Authenticator, type SlidingWindowLimiter } from '../engine/auth/index.js'
import { sendJsonError } from './handlers.js'
import type { CatLookup } from './lookup.js'
import type { UsageCounter } from './usage.js'

export type Gate = (inner: Handler) => Handler

/** The anonymous limit's key: the IPv4 address, or the /64 of an IPv6 one (one subscriber's LAN). */
export function rateKeyOf(address: string): string {
  if (!address.includes(':')) return address
  const b = ipBytes(address)
  if (b === undefined || b.length !== 16) return address
  return Buffer.from(b.subarray(0, 8)).toString('hex') + '::/64'
}

export interface RegisteredGateOptions {
  readonly lookup: CatLookup
  readonly auth: Authenticator
  readonly usage: UsageCounter
  /** The WWW-Authenticate value of a 401. */
  readonly challenge: string
  readonly now: () => number
}

/** A cached verification answers at once; a new header (scrypt) or a refusal awaits. */
export function registeredGate({ lookup, auth, usage, challenge, now }: RegisteredGateOptions): Gate {
  return (inner) => (req, res) => {
    lookup.follow()
    const header = req.header('authorization')
    if (header !== undefined) {
      const id = auth.cached(header)
      if (id !== undefined) {
        usage.count(id)
        return inner(req, res)
      }
    }
    return auth.authenticate(header, req.remoteAddress, now()).then((outcome) => {
      if (outcome.ok) {
        usage.count(outcome.clientId)
        return inner(req, res)
      }
      if (outcome.reason === 'throttled') {
        res.header('Retry-After', String(retryAfterSeconds(outcome.retryAfterMs)))
        sendJsonError(res, 'CATAPI_AUTH_THROTTLED', 'too many failed authentications from this address; retry later')
        return
      }
      res.header('WWW-Authenticate', challenge)
      sendJsonError(
        res,
        'CATAPI_UNAUTHORIZED',
        outcome.reason === 'missing'
          ? 'HTTP Basic credentials (client_id:client_secret) are required'
          : 'wrong client_id or client_secret'
      )
    })
  }
}

export function anonymousGate(lookup: CatLookup, limiter: SlidingWindowLimiter, now: () => number): Gate {
  return (inner) => (req, res) => {
    const decision = limiter.take(rateKeyOf(req.remoteAddress), now())
    if (!decision.allowed) {
      res.header('Retry-After', String(retryAfterSeconds(decision.retryAfterMs)))
      sendJsonError(res, 'CATAPI_RATE_LIMITED', `anonymous access is limited to ${limiter.limit} requests per minute`)
      return
    }
    lookup.follow()
    return inner(req, res)
  }
}
