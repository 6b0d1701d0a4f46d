/**
 * Errors that become HTTP responses. A handler throws `HttpError`; the adapter turns it into its status and the
 * one body format every HTTP role uses: `{"error":{"code":"…","message":"…","field":"…"}}` (hono's
 * `HTTPException` shape, undici's stable `code`s). Anything else a handler throws is a bug: it becomes a 500
 * `HTTP_INTERNAL` and is reported once through `onError`.
 */

/** Codes the adapter itself answers with; roles add their own (`API_*`, …) as plain strings. */
export type HttpAdapterErrorCode =
  | 'HTTP_NOT_FOUND'
  | 'HTTP_METHOD_NOT_ALLOWED'
  | 'HTTP_BAD_JSON'
  | 'HTTP_BAD_ESCAPE'
  | 'HTTP_BAD_HOST'
  | 'HTTP_BODY_TOO_LARGE'
  | 'HTTP_CLIENT_ABORTED'
  | 'HTTP_INTERNAL'

/**
 * The codes of the management API's front door (blockpage/front-door.ts), which answers them itself
 * before a request reaches the api role. They are the management API's codes, but the front door
 * runs in the block page role, and a role imports no other role: so they live here, the block page
 * answers from this table, and api/errors.ts spreads it into its catalogue, which the tests check
 * against docs/api.md both ways.
 */
export const FRONT_DOOR_ERRORS = {
  API_FORBIDDEN: 403,
  API_UNAVAILABLE: 502
} as const

export type FrontDoorErrorCode = keyof typeof FRONT_DOOR_ERRORS

export interface HttpErrorOptions extends ErrorOptions {
  /** The request field at fault (a JSON property, a path parameter); sent only when given. */
  field?: string
  /** Header fields sent with the error, as name, value pairs in one flat list (`['Retry-After', '60']`). */
  headers?: readonly string[]
}

export class HttpError extends Error {
  readonly status: number
  readonly code: string
  readonly field: string | undefined
  readonly headers: readonly string[] | undefined

  constructor(status: number, code: string, message: string, options?: HttpErrorOptions) {
    super(message, options)
    this.name = 'HttpError'
    this.status = status
    this.code = code
    this.field = options?.field
    this.headers = options?.headers
  }

  /** The JSON body for this error, ready to send. */
  toBody(): string {
    return errorBody(this.code, this.message, this.field)
  }
}

/** The error body every role sends; `field` is left out when undefined. */
export function errorBody(code: string, message: string, field?: string): string {
  return JSON.stringify({ error: field === undefined ? { code, message } : { code, message, field } })
}

export function isHttpError(err: unknown): err is HttpError {
  return err instanceof HttpError
}

/** Body of the 500 answer: fixed, so nothing about the failure leaks to the client. */
export const INTERNAL_ERROR_BODY = errorBody('HTTP_INTERNAL', 'internal error')
