/**
 * Builds docs/openapi.yaml (OpenAPI 3.1) from the route table and the schemas the server validates with, so
 * the document and the server cannot drift: `npm run gen:docs` (scripts/gen-docs.ts) rewrites the file and
 * `openapi.test.ts` fails when the committed file differs from what this produces.
 */
import { stringify } from 'yaml'
import { answerSchemas, bodySchemas } from './schemas.js'
import { PATH_PARAMS, type RouteDef } from './route-table.js'
import { ROUTES } from './routes/index.js'

const ERROR_TEXT: Readonly<Record<number, string>> = {
  400: 'malformed request: bad JSON, bad user_id, bad path or query parameter',
  404: 'unknown user, entry or resource',
  401: 'no credentials (and not let in by api.loopback-without-credentials or api.require-credentials: false), or wrong ones; WWW-Authenticate names both schemes',
  409: 'a client ID in the body belongs to another user (API_CLIENT_ID_TAKEN, naming the element)',
  413: 'body larger than api.body-limit',
  429: 'too many failed authentications from this address in a minute; Retry-After says when to try again',
  503: 'too many live log streams open',
  422: 'body of the wrong shape (missing or unknown fields, wrong types) or holding invalid values (address, category, domain, "-" in a whitelist)',
  500: 'internal fault (logged once); the body says nothing more'
}

const TAGS = [
  { name: 'users', description: 'users, their state switches, listing and search' },
  { name: 'defaults', description: 'server defaults (/config/) and new-user defaults (/userconfig/)' },
  { name: 'addresses', description: "a user's IP addresses and prefixes" },
  {
    name: 'client-ids',
    description: "a user's client IDs: the subscriber's name in the DoH path or the DoT server name"
  },
  { name: 'categories', description: 'the taxonomy and the site lookup' },
  { name: 'filter', description: "a user's blocked categories" },
  { name: 'lists', description: 'user and global blacklists and whitelists' },
  { name: 'rpz', description: 'the RPZ zones served to other resolvers (docs/rpz.md)' },
  { name: 'statistics', description: 'reports from the query log, imported every 5 minutes (docs/statistics.md)' },
  {
    name: 'check',
    description:
      "the verdict for a name, explained: the policy step and the entry that decided (the DNS server's own code)"
  },
  { name: 'live', description: 'the live query log (Server-Sent Events) of the operator console' },
  { name: 'document', description: 'this document, served by the API itself' }
]

/** What every route may answer besides its own errors: the authorization check's refusals, by response name. */
const AUTH_ERRORS = [
  [401, 'Unauthorized'],
  [429, 'AuthThrottled']
] as const

function operationId(r: RouteDef): string {
  const words = r.path.split(/[/{}_-]+/).filter((w) => w !== '')
  return r.method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
}

function errorResponse(status: number): Record<string, unknown> {
  return {
    description: ERROR_TEXT[status] ?? 'error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
  }
}

function operation(r: RouteDef): Record<string, unknown> {
  const op: Record<string, unknown> = { tags: [r.tag], summary: r.summary, operationId: operationId(r) }
  if (r.description !== undefined) op.description = r.description
  const params: unknown[] = []
  for (const m of r.path.matchAll(/\{([a-z_]+)\}/g)) {
    const p = PATH_PARAMS[m[1]!]
    if (p === undefined) throw new Error(`no description for path parameter ${m[1]} of ${r.path}`)
    params.push({ name: m[1], in: 'path', required: true, description: p.description, schema: p.schema })
  }
  for (const q of r.query ?? [])
    params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema })
  if (params.length > 0) op.parameters = params
  if (r.body !== undefined) {
    op.requestBody = {
      required: r.bodyOptional !== true,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${r.body}` } } }
    }
  }
  const responses: Record<string, unknown> = {}
  for (const o of r.ok) {
    responses[String(o.status)] =
      o.schema === undefined
        ? { description: o.description }
        : {
            description: o.description,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${o.schema}` } } }
          }
  }
  for (const s of [...r.errors, 500]) responses[String(s)] = errorResponse(s)
  // 401 and 429 come from the authorization check (auth.ts) in front of every route: described once.
  for (const [status, name] of AUTH_ERRORS) responses[String(status)] = { $ref: `#/components/responses/${name}` }
  op.responses = responses
  return op
}

/** The OpenAPI document as a plain object. */
export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of ROUTES) {
    const item = (paths[r.path] ??= {})
    item[r.method.toLowerCase()] = operation(r)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'filterd management API',
      version: '1',
      description:
        'Per-user filtering settings for billing systems. From outside, reach it through the front door (HTTP or HTTPS, Host set to api.host), whose api.access address rules are checked first; then the API checks credentials: ' +
        'a Bearer token or HTTP Basic of an API client (filterd api-client add). Callers on loopback need none by default (api.loopback-without-credentials), and api.require-credentials: false lets the address rules alone decide. ' +
        'Error bodies are always {"error": {"code", "message", "field"?}}; see docs/api.md for the codes.'
    },
    servers: [
      { url: 'http://127.0.0.1:8080', description: 'api.listen (loopback)' },
      {
        url: 'https://api.filterd.local',
        description: "through the front door's TLS listener (blockpage.tls-listen), Host set to api.host"
      }
    ],
    tags: TAGS,
    // Either scheme (or none, where the config lets a caller in without credentials: the empty requirement).
    security: [{ bearerAuth: [] }, { basicAuth: [] }, {}],
    paths,
    components: {
      schemas: { ...bodySchemas, ...answerSchemas },
      responses: Object.fromEntries(AUTH_ERRORS.map(([status, name]) => [name, errorResponse(status)])),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'token <client_id>.<client_secret>, printed by filterd api-client add'
        },
        basicAuth: {
          type: 'http',
          scheme: 'basic',
          description: 'user name client_id, password client_secret (filterd api-client add)'
        }
      }
    }
  }
}

/** The YAML text of docs/openapi.yaml. */
export function renderOpenApi(): string {
  return (
    '# Generated by api/openapi.ts (npm run gen:docs): do not edit.\n' +
    stringify(buildOpenApi(), { lineWidth: 0, aliasDuplicateObjects: false })
  )
}
