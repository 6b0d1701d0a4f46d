/**
 * The list subscriptions' request and answer schemas (routes/subscriptions.ts), spread into
 * schemas.ts's two tables so docs/openapi.yaml and the body checks read them like every other.
 */

const subscriptionFields = {
  url: { type: 'string', pattern: '^https?://', maxLength: 2048, description: 'http:// or https:// URL of the list' },
  format: {
    enum: ['hosts', 'domains', 'adblock', 'rpz'],
    description: 'hosts file, one domain a line, AdBlock ||name^ rules, or RPZ QNAME lines (name CNAME .)'
  },
  target: {
    enum: ['blacklist', 'whitelist', 'category'],
    description: 'the global blacklist, the global whitelist, or the category named by category'
  },
  category: { type: 'integer', minimum: 0, maximum: 65535, description: 'the category, with target category' },
  interval: {
    type: 'integer',
    minimum: 60,
    maximum: 2592000,
    description: 'seconds between refreshes (default lists.interval)'
  },
  enabled: { type: 'boolean', description: 'refreshed while true (default true); its entries stay enforced either way' }
} as const

/** The body of PUT /subscriptions/{source_id}, as subscriptionBodySchemas checks it. */
export interface SubscriptionUpdate {
  url: string
  format: 'hosts' | 'domains' | 'adblock' | 'rpz'
  target: 'blacklist' | 'whitelist' | 'category'
  category?: number
  interval?: number
  enabled?: boolean
}

export const subscriptionBodySchemas = {
  SubscriptionUpdate: {
    type: 'object',
    additionalProperties: false,
    required: ['url', 'format', 'target'],
    description: 'a list subscription; the whole of it (PUT replaces)',
    properties: subscriptionFields
  }
} as const

const stateSchema = {
  type: ['object', 'null'],
  description: 'the last refresh (null before the first); times in ms since the epoch, 0 for never',
  properties: {
    entries: { type: 'integer', description: 'entries of the last good copy, enforced now' },
    lastAttempt: { type: 'integer' },
    lastSuccess: { type: 'integer', description: 'the copy was last confirmed (200 applied, or 304)' },
    lastChange: { type: 'integer', description: 'the entries last changed' },
    nextDue: { type: 'integer' },
    etag: { type: 'string' },
    lastModified: { type: 'string' },
    bytes: { type: 'integer' },
    invalid: { type: 'integer', description: 'lines of the last good copy that could not be read' },
    skipped: { type: 'integer', description: 'well-formed lines that are not entries (exceptions, other actions)' },
    errors: { type: 'integer', description: 'failed refreshes since the source was added' },
    consecutiveErrors: { type: 'integer' },
    lastError: { type: 'string' },
    host: { type: 'string', description: 'the host that made the last attempt' }
  }
} as const

const subscription = {
  type: 'object',
  required: ['id', 'url', 'format', 'target', 'enabled', 'origin', 'state'],
  properties: {
    id: { type: 'string' },
    ...subscriptionFields,
    origin: { enum: ['config', 'api'], description: 'config sources are changed in the config file only' },
    state: stateSchema
  }
} as const

export const subscriptionAnswerSchemas = {
  Subscription: subscription,
  Subscriptions: { type: 'array', items: { $ref: '#/components/schemas/Subscription' } },
  RefreshOutcome: {
    type: 'object',
    required: ['status'],
    properties: {
      status: { enum: ['changed', 'unchanged', 'failed', 'skipped'] },
      entries: { type: 'integer' },
      added: { type: 'integer' },
      removed: { type: 'integer' },
      moved: { type: 'integer', description: 'entries whose target changed' },
      error: { type: 'string', description: 'why it failed (the last good copy stays)' },
      why: { type: 'string', description: 'why it was skipped (another host holds the refresh)' }
    }
  }
} as const
