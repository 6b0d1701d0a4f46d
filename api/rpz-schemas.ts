/** The answer schema of GET /rpz/zones (routes/rpz.ts), spread into schemas.ts's answer table. */

const rpzZone = {
  type: 'object',
  required: ['name', 'serial', 'triggers', 'kind'],
  properties: {
    name: { type: 'string' },
    serial: { type: 'integer', description: 'the SOA serial: the policy generation' },
    triggers: { type: 'integer', description: 'owner names in the zone' },
    kind: { enum: ['global', 'user', 'category'] }
  }
} as const

export const rpzAnswerSchemas = {
  RpzZones: {
    type: 'object',
    required: ['enabled', 'listen', 'zones'],
    properties: {
      enabled: { type: 'boolean', description: 'rpz.enabled' },
      listen: { type: 'string', description: 'rpz.listen, where consumers transfer the zones from' },
      zones: { type: 'array', items: rpzZone },
      error: { type: 'string', description: 'why the list is empty while the role is enabled' }
    }
  }
} as const
