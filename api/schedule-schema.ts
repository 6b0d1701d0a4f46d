/** The JSON schema of a list of scheduled rules, for the request bodies and answers of api/schemas.ts. */
import { DAYS } from '../engine/schedule/index.js'

const TIME = { type: 'string', pattern: '^[0-9]{2}:[0-9]{2}$' } as const

/** `schedules` of a user, `/config/` or `/userconfig/`: the rules, each with its own windows. */
export const scheduledRulesSchema = {
  type: 'array',
  description:
    'time-based rules: inside one of its weekly windows a rule adds its categories, list entries and allow-only mode to the ' +
    'always-on settings; outside them it does not apply. Windows of one rule may touch but not overlap.',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'windows'],
    properties: {
      name: { type: 'string', description: 'unique in the list; /check and the statistics name the rule by it' },
      timezone: { type: 'string', description: 'IANA time zone (Europe/Berlin); default: stats.timezone' },
      windows: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['days', 'from', 'to'],
          properties: {
            days: {
              type: 'array',
              items: { type: 'string', enum: [...DAYS] },
              description: 'the days the window starts on'
            },
            from: { ...TIME, description: 'local start, HH:MM (00:00-23:59)' },
            to: {
              ...TIME,
              description: 'local end, HH:MM (up to 24:00); at or before `from`: the next day (across midnight)'
            }
          }
        }
      },
      filter: {
        type: 'array',
        items: { type: 'integer', minimum: 0, maximum: 65535 },
        description: 'categories blocked inside the windows'
      },
      whitelist: { type: 'array', items: { type: 'string' }, description: 'names passed inside the windows' },
      blacklist: { type: 'array', items: { type: 'string' }, description: 'names blocked inside the windows' },
      allowonly: { type: 'boolean', description: 'inside the windows, block everything the whitelists do not pass' }
    }
  }
} as const
