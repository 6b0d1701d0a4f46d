/**
 * The engine's error catalogue: every code the product raises lives in this union, and
 * docs/errors.md lists each one with its cause and what the operator should do (a test checks both ways).
 * Codes, not classes, cross process and worker boundaries: match on `err.code`, never on `instanceof`.
 */
export const ENGINE_ERROR_CODES = [
  'ENGINE_CONFIG_INVALID',
  'ENGINE_CONFIG_READ',
  'ENGINE_STORE_OPEN',
  'ENGINE_TAXONOMY_INVALID',
  'ENGINE_DATAFILE_INVALID',
  'ENGINE_POOL_TASK',
  'ENGINE_LISTEN',
  'ENGINE_ALREADY_RUNNING',
  'ENGINE_ROLE_UNKNOWN',
  'ENGINE_SHARED_STORE_UNAVAILABLE',
  'ENGINE_STORE_FOLLOWS_REDIS',
  'ENGINE_STORE_FULL',
  'ENGINE_STATS_UNAVAILABLE',
  'ENGINE_RPZ_WIRE_FORMAT',
  'ENGINE_RPZ_ZONE_FILE',
  'ENGINE_RPZ_TRANSFER',
  'ENGINE_RPZ_FEED',
  'ENGINE_CLICKHOUSE_LITERAL',
  'ENGINE_CLICKHOUSE_UNAVAILABLE'
] as const

export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number]

export class EngineError extends Error {
  readonly code: EngineErrorCode
  constructor(code: EngineErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'EngineError'
    this.code = code
  }
}

export function isEngineError(err: unknown): err is EngineError {
  const code: unknown = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined
  return typeof code === 'string' && code.startsWith('ENGINE_')
}
