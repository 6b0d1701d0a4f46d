/**
 * The validated configuration, as every role reads it: the type is derived from the JSON Schema
 * (schema.ts) by json-schema-to-ts, so a key added there is typed here with nothing to mirror by
 * hand. A key with a `default` is required in the type (the loader's ajv fills defaults); one
 * without is optional. Key names keep the spec's spelling (`blockpage-ip`, `redis-ip`) so the file
 * and the code say the same thing.
 */
import type { FromSchema } from 'json-schema-to-ts'
import type { configSchema } from './schema.js'

type DeepReadonly<T> =
  T extends ReadonlyArray<infer U>
    ? ReadonlyArray<DeepReadonly<U>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T

/** The config file's content after validation (defaults filled), before the loader freezes it. */
export type ConfigFile = FromSchema<typeof configSchema>

/** A role's `log-level` (the schema's one enum, shared by every role section). */
export type LogLevel = NonNullable<ConfigFile['proxy']['log-level']>
/** A language of category names and pages (`datafiles.language`, the schema's one enum). */
export type Language = ConfigFile['datafiles']['language']

export type Config = DeepReadonly<ConfigFile> & {
  /** Absolute path of the file this config was read from ('' for the embedded default); set by the loader, not the file. */
  readonly source: string
}

export type { RoleName } from './roles.js'

/** A parsed `address:port`. `family` is 4 or 6. */
export interface HostPort {
  readonly host: string
  readonly port: number
  readonly family: 4 | 6
}
