/**
 * Request body validation: the schemas of schemas.ts compiled once by ajv at module load, and the mapping of
 * ajv's first error to a 422 whose `field` names the element (`filter[2]`, `[0]`, `status`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { HttpError } from '../engine/http/index.js'
import { bodySchemas, type BodySchemaName } from './schemas.js'
import type { OnOff } from '../engine/store/index.js'

export interface UserUpdate {
  name?: string
  safesearch?: OnOff
  safeyoutube?: OnOff
  status?: 'enabled' | 'disabled'
  filter?: number[]
  ip?: string[]
  whitelist?: string[]
  blacklist?: string[]
}

export interface ServerDefaultsUpdate {
  filter?: number[]
  safesearch?: boolean
  safeyoutube?: boolean
  safesearchredirect?: string
}

export interface UserDefaultsUpdate {
  filter?: number[]
  safesearch?: boolean
  safeyoutube?: boolean
}

/** What each schema guarantees once it has accepted a value. */
export interface BodyTypes {
  UserUpdate: UserUpdate
  ServerDefaultsUpdate: ServerDefaultsUpdate
  UserDefaultsUpdate: UserDefaultsUpdate
  AddressList: string[]
  CategoryList: number[]
  DomainList: string[]
}

// `allErrors: false`: the first problem is enough for a 422 and stops ajv early on a huge bad array.
const ajv = new Ajv({ allErrors: false, strict: true })
const validators = new Map<BodySchemaName, ValidateFunction>()
for (const name of Object.keys(bodySchemas) as BodySchemaName[]) validators.set(name, ajv.compile(bodySchemas[name]))

/** `/filter/2` → `filter[2]`, `/3` → `[3]`; the JSON Pointer escapes `~1`/`~0` are undone. */
export function fieldOf (err: ErrorObject): string | undefined {
  const parts = err.instancePath === '' ? [] : err.instancePath.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  const params = err.params as Record<string, unknown>
  if (typeof params.missingProperty === 'string') parts.push(params.missingProperty)
  if (typeof params.additionalProperty === 'string') parts.push(params.additionalProperty)
  if (parts.length === 0) return undefined
  let out = ''
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : (out === '' ? p : `.${p}`)
  return out
}

function describe (err: ErrorObject, field: string | undefined): string {
  const where = field === undefined ? 'body' : field
  if (err.keyword === 'additionalProperties') return `${where}: unknown field`
  if (err.keyword === 'required') return `${where}: required field is missing`
  if (err.keyword === 'minProperties') return 'body: at least one field is required'
  return `${where} ${err.message ?? 'is invalid'}`
}

/** Checks `value` against the named schema; throws 422 `API_INVALID_BODY` naming the first bad element. */
export function checkBody<N extends BodySchemaName> (name: N, value: unknown): BodyTypes[N] {
  const validate = validators.get(name)!             // every name was compiled above
  if (validate(value)) return value as BodyTypes[N]
  const err = validate.errors?.[0]
  if (err === undefined) throw new HttpError(422, 'API_INVALID_BODY', 'body is invalid')
  const field = fieldOf(err)
  return throwInvalid(describe(err, field), field)
}

function throwInvalid (message: string, field: string | undefined): never {
  throw new HttpError(422, 'API_INVALID_BODY', message, field === undefined ? undefined : { field })
}
