/**
 * The collector's error catalogue: every code it answers with, and its status. docs/collector.md
 * ("Error codes") lists the same codes (collector/errors.test.ts checks both ways). Codes the HTTP
 * adapter answers by itself keep their adapter names (`HTTP_NOT_FOUND`, …), as in every HTTP role.
 */
import { HttpError } from '../engine/http/index.js'

export const COLLECTOR_ERRORS = {
  COLLECTOR_BAD_COUNT: 400,
  COLLECTOR_BAD_REPORT: 400,
  COLLECTOR_UNKNOWN_KEY: 403
} as const

export type CollectorErrorCode = keyof typeof COLLECTOR_ERRORS

/** A collector error with the status its code carries; `field` names the part of the request at fault. */
export function collectorError(code: CollectorErrorCode, message: string, field?: string): HttpError {
  return new HttpError(COLLECTOR_ERRORS[code], code, message, field === undefined ? undefined : { field })
}
