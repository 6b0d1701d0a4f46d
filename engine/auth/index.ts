/**
 * Client credentials and their checking, shared by the roles that have clients (the categorization
 * API's registered listener, the management API): scrypt-hashed secrets, HTTP Basic and Bearer
 * parsing, a verifying and caching authenticator with equal work for unknown ids, and the
 * sliding-window limiter that brakes failed attempts (and the anonymous listener's requests).
 */
export {
  bearerToken,
  clientRecord,
  isValidClientId,
  newClientId,
  newSecret,
  parseBasicOrBearer,
  verifySecret,
  type Credentials,
  type ScryptParams
} from './credentials.js'
export { Authenticator, type AuthOutcome, type AuthenticatorOptions } from './authenticator.js'
export { SlidingWindowLimiter, retryAfterSeconds, type LimitDecision } from './limiter.js'
