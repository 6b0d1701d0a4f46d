/**
 * The categorization API's error catalogue: every code it answers with, and its status. docs/catapi.md
 * ("Error codes") lists the same codes (catapi/errors.test.ts checks both ways). Codes the HTTP
 * adapter answers by itself keep their adapter names (`HTTP_NOT_FOUND`, …), as in every HTTP role.
 */
export const CATAPI_ERRORS = {
  CATAPI_BAD_DOMAIN: 400,
  CATAPI_BAD_URL: 400,
  CATAPI_UNAUTHORIZED: 401,
  CATAPI_AUTH_THROTTLED: 429,
  CATAPI_RATE_LIMITED: 429
} as const

export type CatApiErrorCode = keyof typeof CATAPI_ERRORS
