/**
 * The RPZ zones filterd serves (docs/rpz.md), for the console: the rpz role is a process of its own,
 * so this asks its `/zones` (on `rpz.metrics-listen`, from the same config) and passes the list on.
 * The answer is a status report: a role that is off or unreachable is said in the body, not as an error.
 */
import { parseHostPort } from '../../engine/config/index.js'
import type { Config } from '../../engine/config/index.js'
import type { RouteDef } from '../route-table.js'

export interface RpzZoneView {
  name: string
  serial: number
  triggers: number
  kind: 'global' | 'user' | 'category'
}

export interface RpzZonesView {
  enabled: boolean
  /** rpz.listen: where consumers transfer the zones from. */
  listen: string
  zones: RpzZoneView[]
  /** Why the zone list is missing while rpz.enabled is true. */
  error?: string
}

/** How long the API waits for the rpz role's answer. */
const RPZ_TIMEOUT_MS = 3000

function zonesUrl(metricsListen: string): string {
  const { host, port } = parseHostPort(metricsListen)
  // A wildcard listener is reached on loopback.
  const reach = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host
  return `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}/zones`
}

/** The zone list as the rpz role of this config serves it. */
export function rpzZonesReader(rpz: Readonly<Config['rpz']> | undefined): () => Promise<RpzZonesView> {
  if (rpz === undefined) return () => Promise.resolve({ enabled: false, listen: '', zones: [] })
  const base = { enabled: rpz.enabled, listen: rpz.listen, zones: [] }
  const url = zonesUrl(rpz['metrics-listen'])
  return async () => {
    if (!rpz.enabled) return base
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(RPZ_TIMEOUT_MS) })
      if (!res.ok) return { ...base, error: `the rpz role answered ${res.status}` }
      const body = (await res.json()) as { zones?: unknown }
      if (!Array.isArray(body.zones)) return { ...base, error: 'the rpz role answered without a zone list' }
      return { ...base, zones: body.zones as RpzZoneView[] }
    } catch (err) {
      return { ...base, error: `the rpz role at ${rpz['metrics-listen']} did not answer: ${(err as Error).message}` }
    }
  }
}

export const rpzRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/rpz/zones',
    tag: 'rpz',
    summary: 'the RPZ zones the rpz role serves, with their serials, in the order a consumer lists them',
    description:
      'Asked of the rpz role on rpz.metrics-listen. enabled false: the role is off (rpz.enabled); error: it is on but did not answer.',
    ok: [{ status: 200, description: 'the zones', schema: 'RpzZones' }],
    errors: [],
    async handle(ctx, _req, res) {
      res.json(await ctx.rpzZones())
    }
  }
]
