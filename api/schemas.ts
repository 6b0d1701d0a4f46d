/**
 * JSON Schemas of the management API: request bodies (compiled by ajv and enforced, see validate.ts) and
 * answers (documentation only). They are written in the subset that draft-07 (ajv's default) and JSON Schema
 * 2020-12 (OpenAPI 3.1) read the same way, so docs/openapi.yaml embeds them unchanged.
 *
 * Shape is checked here; meaning (is this an IP address, does category 42 exist, is `-` allowed in this list)
 * is checked by the handlers, which answer 422 with a code of their own (errors.ts) naming the element.
 */
import { scheduledRulesSchema } from './schedule-schema.js'

import { subscriptionAnswerSchemas, subscriptionBodySchemas } from './subscription-schemas.js'
import { rpzAnswerSchemas } from './rpz-schemas.js'

const onOff = { type: 'string', enum: ['on', 'off'] } as const
const categoryNumbers = {
  type: 'array',
  items: { type: 'integer', minimum: 0, maximum: 65535 },
  description: 'category numbers (see GET /categories/)'
} as const
/** What both defaults objects (`/config/`, `/userconfig/`) can change; the server's adds the redirect. */
const defaultsUpdateProperties = {
  filter: categoryNumbers,
  safesearch: { type: 'boolean' },
  safeyoutube: { type: 'boolean' },
  schedules: scheduledRulesSchema
} as const
const addressList = {
  type: 'array',
  // No length bounds here: an empty or over-long entry is an invalid address (API_INVALID_ADDRESS
  // naming it), not a malformed body; the body size cap bounds the length.
  items: { type: 'string' },
  description:
    'IPv4 or IPv6 addresses, or prefixes in CIDR form (10.1.0.0/16, 2001:db8::/48); no white space, zone index or /0'
} as const
const clientIdList = {
  type: 'array',
  // No length bounds here: a bad ID is API_INVALID_CLIENT_ID naming it, not a malformed body.
  items: { type: 'string' },
  description:
    'client IDs: each one DNS label of 1 to 63 letters, digits and "-", not starting or ending with "-"; stored lower case, unique across users'
} as const
const domainList = {
  type: 'array',
  // No length bounds here: an empty or over-long name is an invalid domain (API_INVALID_DOMAIN
  // naming it), not a malformed body; the body size cap bounds the length.
  items: { type: 'string' },
  description: 'domain names; IDNs are accepted and stored as punycode'
} as const

/** Request bodies, by name; each becomes `#/components/schemas/<name>` in the OpenAPI document. */
export const bodySchemas = {
  UserUpdate: {
    type: 'object',
    additionalProperties: false,
    description: 'User object; fields left out keep their value (a new user starts from /userconfig/)',
    properties: {
      name: { type: 'string', description: 'must equal the user_id of the path when given' },
      safesearch: onOff,
      safeyoutube: onOff,
      status: { type: 'string', enum: ['enabled', 'disabled'] },
      filter: categoryNumbers,
      ip: addressList,
      client_ids: clientIdList,
      whitelist: domainList,
      blacklist: {
        ...domainList,
        description: 'domain names; the entry "-" blocks everything the whitelist does not pass'
      },
      schedules: scheduledRulesSchema
    }
  },
  ServerDefaultsUpdate: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      ...defaultsUpdateProperties,
      safesearchredirect: { type: 'string', maxLength: 2048, description: 'http(s) URL, or "" to clear' }
    }
  },
  UserDefaultsUpdate: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: defaultsUpdateProperties
  },
  AddressList: addressList,
  ClientIdList: clientIdList,
  CategoryList: categoryNumbers,
  DomainList: domainList,
  ...subscriptionBodySchemas
} as const

export type BodySchemaName = keyof typeof bodySchemas

const moved = {
  type: 'array',
  description: 'addresses taken from another user by this request (the billing system is the source of truth)',
  items: {
    type: 'object',
    required: ['address', 'from'],
    properties: { address: { type: 'string' }, from: { type: 'string', description: 'the previous owner' } }
  }
} as const

const userProperties = {
  name: { type: 'string' },
  safesearch: onOff,
  safeyoutube: onOff,
  status: { type: 'string', enum: ['enabled', 'disabled'] },
  filter: { type: 'array', items: { type: 'integer' } },
  ip: { type: 'array', items: { type: 'string' } },
  client_ids: {
    type: 'array',
    items: { type: 'string' },
    description: 'client IDs (DoH path, DoT server name), lower case; left out when the user has none'
  },
  whitelist: { type: 'array', items: { type: 'string' } },
  blacklist: { type: 'array', items: { type: 'string' } },
  schedules: scheduledRulesSchema
} as const
const userRequired = ['name', 'safesearch', 'safeyoutube', 'status', 'filter', 'ip', 'whitelist', 'blacklist'] as const

/** Answer bodies, for the OpenAPI document. */
export const answerSchemas = {
  User: { type: 'object', required: userRequired, properties: userProperties },
  UserWithMoves: {
    type: 'object',
    required: [...userRequired, 'moved'],
    properties: { ...userProperties, moved }
  },
  Users: { type: 'array', items: { $ref: '#/components/schemas/User' } },
  UserIds: { type: 'array', items: { type: 'string' } },
  Addresses: { type: 'array', items: { type: 'string' }, description: 'canonical addresses and prefixes' },
  ClientIds: { type: 'array', items: { type: 'string' }, description: 'client IDs, lower case' },
  AddressesWithMoves: {
    type: 'object',
    required: ['ip', 'moved'],
    properties: { ip: { type: 'array', items: { type: 'string' } }, moved }
  },
  Categories: { type: 'array', items: { type: 'integer' } },
  Domains: { type: 'array', items: { type: 'string' } },
  ServerDefaults: {
    type: 'object',
    required: ['filter', 'safesearch', 'safeyoutube', 'safesearchredirect'],
    properties: {
      filter: { type: 'array', items: { type: 'integer' } },
      safesearch: { type: 'boolean' },
      safeyoutube: { type: 'boolean' },
      safesearchredirect: { type: 'string' },
      schedules: scheduledRulesSchema
    }
  },
  UserDefaults: {
    type: 'object',
    required: ['filter', 'safesearch', 'safeyoutube'],
    properties: {
      filter: { type: 'array', items: { type: 'integer' } },
      safesearch: { type: 'boolean' },
      safeyoutube: { type: 'boolean' },
      schedules: scheduledRulesSchema
    }
  },
  CategoryGroups: {
    type: 'array',
    items: {
      type: 'object',
      required: ['group', 'categories'],
      properties: {
        group: { type: 'string' },
        categories: { type: 'object', additionalProperties: { type: 'string' } }
      }
    }
  },
  CategoryNames: { type: 'object', additionalProperties: { type: 'string' }, description: 'category number → name' },
  Site: {
    type: 'object',
    required: ['domain', 'categories'],
    properties: {
      domain: { type: 'string', description: 'the database key that matched (the host or a parent domain)' },
      categories: { type: 'array', items: { type: 'integer' } }
    }
  },
  Chart: {
    type: 'object',
    required: ['labels', 'datasets'],
    properties: {
      labels: {
        type: 'array',
        items: { type: 'string' },
        description: 'hours (YYYY-MM-DD HH:00:00), days (YYYY-MM-DD) or domains'
      },
      datasets: {
        type: 'array',
        items: {
          type: 'object',
          required: ['label', 'data'],
          properties: {
            label: { enum: ['Requests', 'NXdomain', 'Blocks'] },
            data: { type: 'array', items: { type: 'integer' } }
          }
        }
      }
    }
  },
  Detail: {
    type: 'object',
    required: ['timestamps', 'reports'],
    properties: {
      timestamps: { type: 'array', items: { type: 'string' }, description: 'the days, YYYY-MM-DD' },
      reports: {
        type: 'array',
        description: 'one per day: a chart of its top domains, and cats[i], the categories of labels[i]',
        items: {
          type: 'object',
          required: ['labels', 'cats', 'datasets'],
          properties: {
            labels: { type: 'array', items: { type: 'string' } },
            cats: { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
            datasets: { $ref: '#/components/schemas/Chart/properties/datasets' }
          }
        }
      }
    }
  },
  RawReport: {
    type: 'object',
    required: ['fields', 'data'],
    properties: {
      fields: {
        type: 'array',
        items: { type: 'string' },
        description:
          'created, nxdomain, address, host, blockedhost, reasom, cats, blockedcats, then the fields ?with= adds (source)'
      },
      data: {
        type: 'array',
        items: {
          type: 'array',
          description: 'one query, in the order of fields',
          // An answer's schema is documentation only (OpenAPI 3.1 reads it as JSON Schema 2020-12), so the
          // tuple is spelled with prefixItems; the console's type of a row is generated from it.
          prefixItems: [
            { type: 'string' },
            { type: 'integer' },
            { type: 'string' },
            { type: 'string' },
            { type: 'string' },
            { type: 'string' },
            { type: 'array', items: { type: 'integer' } },
            { type: 'array', items: { type: 'integer' } },
            { type: 'string' }
          ],
          minItems: 8,
          maxItems: 9,
          items: false
        }
      }
    }
  },
  Overview: {
    type: 'object',
    required: ['hours', 'days', 'totals', 'anonymous', 'users', 'topBlocked', 'topCategories'],
    properties: {
      hours: { $ref: '#/components/schemas/Chart' },
      days: { $ref: '#/components/schemas/Chart' },
      totals: { $ref: '#/components/schemas/Counts' },
      anonymous: { $ref: '#/components/schemas/Counts' },
      users: { $ref: '#/components/schemas/Counts' },
      topBlocked: {
        type: 'array',
        items: {
          type: 'object',
          required: ['domain', 'blocks', 'requests', 'cats'],
          properties: {
            domain: { type: 'string' },
            blocks: { type: 'integer' },
            requests: { type: 'integer' },
            cats: { type: 'array', items: { type: 'integer' } }
          }
        }
      },
      topCategories: {
        type: 'array',
        items: {
          type: 'object',
          required: ['category', 'blocks'],
          properties: { category: { type: 'integer' }, blocks: { type: 'integer' } }
        }
      }
    }
  },
  TimeZone: {
    type: 'object',
    required: ['timezone'],
    properties: { timezone: { type: 'string', description: 'IANA name (UTC, Europe/Berlin)' } }
  },
  Counts: {
    type: 'object',
    required: ['requests', 'blocks'],
    properties: { requests: { type: 'integer' }, blocks: { type: 'integer' } }
  },
  Check: {
    type: 'object',
    description: 'what the DNS server answers this client for this name right now, and the policy step that decided',
    required: [
      'domain',
      'address',
      'user',
      'action',
      'step',
      'matched',
      'categories',
      'blockedCategories',
      'site',
      'target',
      'schedule',
      'changesAt'
    ],
    properties: {
      domain: { type: 'string', description: 'the name judged, as the category database keys it' },
      address: {
        type: ['string', 'null'],
        description: 'the client address judged (null for /users/{user_id}/check/)'
      },
      user: {
        type: ['string', 'null'],
        description: 'the user the policy came from; null: anonymous (the server defaults of /config/)'
      },
      clientId: {
        type: 'string',
        description: 'the client ID judged (?client-id=, lower case); left out when none was given'
      },
      action: {
        enum: ['forward', 'block', 'safesearch', 'safevideo', 'refuse'],
        description:
          "forward: the operator's resolver answers; block: the block page address; safesearch/safevideo: the safe host; refuse: REFUSED, the client ID is no user's (proxy.unknown-client-id: refuse)"
      },
      step: {
        enum: [
          'builtin-whitelist',
          'global-whitelist',
          'global-blacklist',
          'global-allow-only',
          'rpz',
          'user-disabled',
          'user-whitelist',
          'user-blacklist',
          'user-allow-only',
          'safesearch',
          'safevideo',
          'category',
          'unknown-client-id',
          'schedule-whitelist',
          'schedule-blacklist',
          'schedule-allow-only',
          'schedule-category',
          'none'
        ],
        description:
          'the step that decided, in policy order; none: no step matched, the query is forwarded; schedule-*: the user step ' +
          'of that name, decided by a scheduled rule inside one of its windows'
      },
      matched: {
        type: ['string', 'null'],
        description: 'the list entry ("-" for allow-only), search or video host, or category database key that decided'
      },
      source: {
        type: 'string',
        description:
          "where the deciding entry came from, left out for the operator's own lists and the category database: list:<id> (a list subscription; steps global-blacklist, global-whitelist, category) or rpz:<zone> (an RPZ feed; step rpz)"
      },
      categories: {
        type: 'array',
        items: { type: 'integer' },
        description: 'categories of the name in the category database'
      },
      blockedCategories: {
        type: 'array',
        items: { type: 'integer' },
        description: 'those in the filter that blocked it (step category)'
      },
      site: {
        type: ['object', 'null'],
        description: 'the site record of the name (GET /site/{host}), null when the database does not know it',
        properties: { domain: { type: 'string' }, categories: { type: 'array', items: { type: 'integer' } } }
      },
      target: {
        type: ['string', 'null'],
        description: 'safevideo: the safe host answered; safesearch: the search engine'
      },
      schedule: {
        type: ['object', 'null'],
        description: 'the scheduled rule that decided (schedule-* steps), with its open window; null otherwise',
        required: ['name', 'timezone', 'window'],
        properties: {
          name: { type: 'string' },
          timezone: { type: 'string' },
          window: {
            type: 'object',
            required: ['index', 'days', 'from', 'to'],
            properties: {
              index: { type: 'integer', description: "its place in the rule's windows" },
              days: { type: 'array', items: { type: 'string' } },
              from: { type: 'string' },
              to: { type: 'string' }
            }
          }
        }
      },
      changesAt: {
        type: ['object', 'null'],
        description:
          "when a scheduled rule touching this name next opens or closes, so the decision may change (answers' TTLs end " +
          'there); null when no scheduled rule touches the name',
        required: ['utc', 'local', 'timezone'],
        properties: {
          utc: { type: 'string', description: 'ISO 8601, UTC' },
          local: { type: 'string', description: "YYYY-MM-DD HH:MM:SS in the rule's time zone" },
          timezone: { type: 'string' }
        }
      }
    }
  },
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          field: {
            type: 'string',
            description: 'the request part at fault: a path or query parameter, or a body element such as filter[2]'
          }
        }
      }
    }
  },
  ...subscriptionAnswerSchemas,
  ...rpzAnswerSchemas
} as const

export type AnswerSchemaName = keyof typeof answerSchemas
