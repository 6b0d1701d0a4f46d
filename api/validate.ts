/**
 * Request body validation: the schemas of schemas.ts compiled once by ajv at module load, and the mapping of
 * ajv's first error to a 422 whose `field` names the element (`filter[2]`, `[0]`, `status`), or `body` when the
 * body as a whole is at fault (not an object, an empty update); and the refusal of repeated member names.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { HttpError, findDuplicateKey } from '../engine/http/index.js'
import { bodySchemas, type BodySchemaName } from './schemas.js'
import type { OnOff } from '../engine/store/index.js'
import type { SubscriptionUpdate } from './subscription-schemas.js'
import type { ScheduledRule } from '../engine/schedule/index.js'

export interface UserUpdate {
  name?: string
  safesearch?: OnOff
  safeyoutube?: OnOff
  status?: 'enabled' | 'disabled'
  filter?: number[]
  ip?: string[]
  client_ids?: string[]
  whitelist?: string[]
  blacklist?: string[]
  schedules?: ScheduledRule[]
}

export interface ServerDefaultsUpdate {
  filter?: number[]
  safesearch?: boolean
  safeyoutube?: boolean
  safesearchredirect?: string
  schedules?: ScheduledRule[]
}

export interface UserDefaultsUpdate {
  filter?: number[]
  safesearch?: boolean
  safeyoutube?: boolean
  schedules?: ScheduledRule[]
}

/** What each schema guarantees once it has accepted a value. */
export interface BodyTypes {
  UserUpdate: UserUpdate
  ServerDefaultsUpdate: ServerDefaultsUpdate
  UserDefaultsUpdate: UserDefaultsUpdate
  AddressList: string[]
  ClientIdList: string[]
  CategoryList: number[]
  DomainList: string[]
  SubscriptionUpdate: SubscriptionUpdate
}

// `allErrors: false`: the first problem is enough for a 422 and stops ajv early on a huge bad array.
const ajv = new Ajv({ allErrors: false, strict: true, verbose: true })
const validators = new Map<BodySchemaName, ValidateFunction>()
for (const name of Object.keys(bodySchemas) as BodySchemaName[]) validators.set(name, ajv.compile(bodySchemas[name]))

/** `/filter/2` → `filter[2]`, `/3` → `[3]`; the JSON Pointer escapes `~1`/`~0` are undone. */
export function fieldOf(err: ErrorObject): string | undefined {
  const parts =
    err.instancePath === ''
      ? []
      : err.instancePath
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  const params = err.params as Record<string, unknown>
  if (typeof params.missingProperty === 'string') parts.push(params.missingProperty)
  if (typeof params.additionalProperty === 'string') parts.push(params.additionalProperty)
  if (parts.length === 0) return undefined
  let out = ''
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`
  return out
}

/**
 * The field a problem of the body as a whole names: `body` (as FastAPI's `loc` does), so every 422
 * `API_INVALID_BODY` names where it is, not only those about one element.
 */
const WHOLE_BODY = 'body'

function describe(err: ErrorObject, field: string | undefined): string {
  const where = field === undefined ? 'body' : field
  if (err.keyword === 'additionalProperties') return `${where}: unknown field`
  if (err.keyword === 'required') return `${where}: required field is missing`
  if (err.keyword === 'minProperties')
    return `body: at least one field is required (${Object.keys(schemaProperties(err)).join(', ')})`
  return `${where} ${err.message ?? 'is invalid'}`
}

/** The properties the failing (object) schema knows, for naming them in the message. */
function schemaProperties(err: ErrorObject): Record<string, unknown> {
  const schema = err.parentSchema as { properties?: Record<string, unknown> } | undefined
  return schema?.properties ?? {}
}

/** Checks `value` against the named schema; throws 422 `API_INVALID_BODY` naming the first bad element. */
export function checkBody<N extends BodySchemaName>(name: N, value: unknown): BodyTypes[N] {
  const validate = validators.get(name)! // every name was compiled above
  if (validate(value)) return value as BodyTypes[N]
  const err = validate.errors?.[0]
  if (err === undefined) return throwInvalid('body is invalid', WHOLE_BODY)
  const field = fieldOf(err)
  return throwInvalid(describe(err, field), field ?? WHOLE_BODY)
}

/**
 * Refuses a body that repeats a member name within one object (engine/http/json-keys.ts): 422
 * `API_INVALID_BODY` naming the member and where the repeat starts. `text` parsed already.
 */
export function checkUniqueKeys(text: string): void {
  const dup = findDuplicateKey(text)
  if (dup !== undefined)
    throwInvalid(`${dup.field}: the name appears twice in one object (again at character ${dup.position})`, dup.field)
}

function throwInvalid(message: string, field: string): never {
  throw new HttpError(422, 'API_INVALID_BODY', message, { field })
}
