/**
 * The shape of one management API endpoint: what the server registers (method, path, handler) and what
 * docs/openapi.yaml says about it (summary, parameters, body schema, every status it answers), in one record,
 * so the document cannot list an endpoint the server lacks or miss one it has.
 */
import type { HttpRequest, HttpResponse } from '../engine/http/index.js'
import type { ApiContext } from './context.js'
import type { AnswerSchemaName, BodySchemaName } from './schemas.js'

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'

export interface QueryParam {
  readonly name: string
  readonly description: string
  readonly schema: Readonly<Record<string, unknown>>
}

export interface Outcome {
  readonly status: number
  readonly description: string
  readonly schema?: AnswerSchemaName
}

export interface RouteDef {
  readonly method: Method
  /** OpenAPI form: `/users/{user_id}/ip/`; the server registers `{x}` as `:x`. */
  readonly path: string
  readonly tag: string
  readonly summary: string
  readonly description?: string
  readonly query?: readonly QueryParam[]
  readonly body?: BodySchemaName
  /** The body may be left out (the route says what that means): the document marks it not required. */
  readonly bodyOptional?: true
  /** Success answers. */
  readonly ok: readonly Outcome[]
  /** Error statuses this endpoint can answer besides 500 (the bodies are always the Error schema). */
  readonly errors: readonly number[]
  /** Extra server-side patterns for the same handler (undocumented aliases, e.g. a CIDR with a raw `/`). */
  readonly aliases?: readonly string[]
  readonly handle: (ctx: ApiContext, req: HttpRequest, res: HttpResponse) => void | Promise<void>
}

/** Path parameters and their descriptions, for the document. */
export const PATH_PARAMS: Readonly<Record<string, { description: string; schema: Record<string, unknown> }>> = {
  user_id: { description: 'user identifier', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$' } },
  ip: {
    description: 'an address, or a prefix with its "/" percent-encoded (10.0.0.0%2F24)',
    schema: { type: 'string' }
  },
  client_id: {
    description: 'a client ID (one DNS label; matched without regard to case)',
    schema: { type: 'string', pattern: '^[A-Za-z0-9-]{1,63}$' }
  },
  category: { description: 'category number', schema: { type: 'integer', minimum: 0 } },
  domain: {
    description: 'domain name (IDN or punycode); "-" for the allow-only entry of a blacklist',
    schema: { type: 'string' }
  },
  host: { description: 'host name to look up', schema: { type: 'string' } },
  source_id: { description: 'list subscription id', schema: { type: 'string', pattern: '^[a-z0-9_-]{1,32}$' } },
  filter: { description: 'all, or www (names that start with "www.")', schema: { enum: ['all', 'www'] } },
  query: {
    description: 'user name or IP address; a trailing "*" matches a name prefix or an address prefix',
    schema: { type: 'string' }
  }
}

export function pattern(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1')
}
