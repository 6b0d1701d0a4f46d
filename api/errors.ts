/**
 * The management API's error catalogue. Every code the API answers with is listed here with its status;
 * docs/api.md lists the same codes (a test checks both ways). Codes the HTTP adapter answers by itself
 * (`HTTP_BAD_JSON`, `HTTP_BODY_TOO_LARGE`, `HTTP_NOT_FOUND`, `HTTP_METHOD_NOT_ALLOWED`, `HTTP_INTERNAL`, …)
 * keep their adapter names so every HTTP role reports them alike.
 */
import { FRONT_DOOR_ERRORS, HttpError } from '../engine/http/index.js'

export const API_ERRORS = {
  API_BAD_USER_ID: 400,
  API_BAD_PARAM: 400,
  API_BAD_QUERY: 400,
  API_INVALID_BODY: 422,
  API_INVALID_ADDRESS: 422,
  API_INVALID_DOMAIN: 422,
  API_UNKNOWN_CATEGORY: 422,
  API_ALLOW_ONLY_WHITELIST: 422,
  API_NAME_MISMATCH: 422,
  API_INVALID_CLIENT_ID: 422,
  API_CLIENT_ID_TAKEN: 409,
  API_USER_NOT_FOUND: 404,
  API_ENTRY_NOT_FOUND: 404,
  API_SITE_NOT_FOUND: 404,
  API_SUBSCRIPTION_NOT_FOUND: 404,
  API_SUBSCRIPTION_IN_CONFIG: 409,
  API_TOO_MANY_STREAMS: 503,
  API_UNAUTHORIZED: 401,
  API_AUTH_THROTTLED: 429,
  API_CROSS_SITE: 403,
  API_UNSUPPORTED_MEDIA_TYPE: 415,
  API_MISDIRECTED_HOST: 421,
  // API_FORBIDDEN (403) and API_UNAVAILABLE (502): answered by the front door (engine/http/errors.ts).
  ...FRONT_DOOR_ERRORS,
  API_STORE_UNAVAILABLE: 503,
  API_STORE_FOLLOWS_REDIS: 503,
  API_STORE_FULL: 507,
  API_STATS_UNAVAILABLE: 503
} as const

export type ApiErrorCode = keyof typeof API_ERRORS

/** Codes of the HTTP adapter that API clients can see. */
export const ADAPTER_ERRORS = {
  HTTP_BAD_JSON: 400,
  HTTP_BAD_ESCAPE: 400,
  HTTP_BAD_HOST: 400,
  HTTP_CLIENT_ABORTED: 400,
  HTTP_NOT_FOUND: 404,
  HTTP_METHOD_NOT_ALLOWED: 405,
  HTTP_BODY_TOO_LARGE: 413,
  HTTP_INTERNAL: 500
} as const

/** An API error with the status its code carries; `field` names the part of the request at fault. */
export function apiError(code: ApiErrorCode, message: string, field?: string): HttpError {
  return new HttpError(API_ERRORS[code], code, message, field === undefined ? undefined : { field })
}
