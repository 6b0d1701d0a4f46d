/**
 * The `rpz` role (`filterd rpz --config FILE`, with `rpz.enabled`): filterd's policy as RPZ zones
 * for the resolvers a provider already runs (docs/rpz.md). It serves, on `rpz.listen`, the global
 * zone, one zone per category and optionally one per user, by AXFR and IXFR (from each zone's
 * journal), answers SOA probes, and sends NOTIFY to `rpz.notify` whenever a zone's content changes.
 * The SOA serial is the policy generation (rpz/policy-zones.ts policySerial). Its HTTP
 * listener (`rpz.metrics-listen`) serves
 *
 *   GET /health   200 with the zones and serials
 *   GET /zones    the zone list: name, serial, triggers, kind, in the order a consumer lists them
 *   GET /metrics  Prometheus: filterd_rpz_zone_serial{zone}, _zone_triggers{zone},
 *                 _requests_total{kind}, _notify_total{outcome}
 */
import { formatHostPort, parseHostPort, type Config } from '../engine/config/index.js'
import { createHttpServer, roleHttpImpl } from '../engine/http/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'
import { createStoreIfMissing, GenerationWatcher, openConfiguredStore } from '../engine/store/index.js'
import { healthReport, type HealthReport } from '../engine/health/index.js'
import { compileAccessRules } from '../engine/net/index.js'
import { createBuiltinWhitelist } from '../engine/whitelist/index.js'
import { blockAction } from './policy-zones.js'
import { tsigKey, type TsigKey } from '../engine/rpz-zones/index.js'
import { PolicyZoneSet, type ZoneSetSettings } from './zone-set.js'
import { listenDns } from './listener.js'
import { Notifier, type NotifyTarget } from './notify.js'
import { rpzMetrics } from './metrics.js'

export function zoneSetSettings(config: Readonly<Config>): ZoneSetSettings {
  const r = config.rpz
  return {
    suffix: r.suffix.toLowerCase().replace(/\.$/, ''),
    categories: r.categories,
    users: r.users,
    block: blockAction(r['block-cname'], config.proxy['blockpage-ip']),
    passed: createBuiltinWhitelist(config.common['vendor-names']).keys,
    zone: {
      soa: {
        mname: 'localhost',
        rname: 'hostmaster.localhost',
        refresh: r.refresh,
        retry: r.retry,
        expire: r.expire,
        minimum: r.ttl
      },
      ttl: r.ttl,
      journalOwners: r['journal-owners']
    }
  }
}

function keysOf(config: Readonly<Config>): Map<string, TsigKey> {
  const keys = new Map<string, TsigKey>()
  for (const k of config.rpz['tsig-keys']) {
    const key = tsigKey(k.name, k.algorithm ?? 'hmac-sha256', k.secret)
    keys.set(key.name, key)
  }
  return keys
}

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  if (!config.rpz.enabled) return { endpoints: ['rpz idle (rpz.enabled is false)'], close: async () => {} }
  await createStoreIfMissing(config)
  return await startWithStack(async (stack) => {
    const store = stack.own(openConfiguredStore(config, { readOnly: true }))
    const zones = new PolicyZoneSet(store, zoneSetSettings(config))
    const notifier = new Notifier()
    const metrics = rpzMetrics(zones, notifier)
    const targets: NotifyTarget[] = config.rpz.notify.map((a) => parseHostPort(a))
    stack.own(notifier)
    const onChange = (): void => {
      const changed = zones.refresh()
      for (const name of changed) {
        const zone = zones.get(name)
        logger.info({ zone: name, serial: zone?.serial }, 'rpz zone changed')
        if (zone !== undefined) notifier.notify(zone, targets)
      }
    }
    const watcher = new GenerationWatcher(store, onChange).start()
    stack.defer(() => watcher.stop())
    const listen = parseHostPort(config.rpz.listen)
    const dns = await listenDns(
      listen.host,
      listen.port,
      {
        zone: (n) => zones.get(n),
        access: compileAccessRules(config.rpz['transfer-access']),
        keys: keysOf(config),
        count: (kind) => {
          metrics.count(kind)
        }
      },
      {
        maxConnections: config.rpz['tcp-max-connections'],
        idleMs: config.rpz['tcp-idle-timeout'],
        messageMs: config.rpz['tcp-message-timeout'],
        onDropped: () => metrics.dropped()
      },
      (err) => logger.error({ err: err.message }, 'rpz request failed')
    )
    stack.own(dns)
    metrics.listener = () => dns.stats()
    stack.endpoints.push(`rpz dns tcp+udp ${formatHostPort({ host: listen.host, port: dns.port })}`)
    const health = (): HealthReport =>
      healthReport({
        role: 'rpz',
        listeners: stack.endpoints,
        generation: store.generation(),
        extra: { zones: zones.list() }
      })
    const http = createHttpServer({
      impl: roleHttpImpl(config.common['http-server'], 'public'),
      bodyLimit: 1024,
      logger: { warn: (m) => logger.warn(m) }
    })
    http.route('GET', '/health', (_req, res) => {
      res.json(health())
    })
    http.route('GET', '/zones', (_req, res) => {
      res.json({ zones: zones.list() })
    })
    http.route('GET', '/metrics', async (_req, res) => {
      res.header('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics())
    })
    const mlisten = parseHostPort(config.rpz['metrics-listen'])
    const { port: mport } = await http.listen(mlisten.host, mlisten.port)
    stack.own(http)
    stack.endpoints.push(`rpz http ${formatHostPort({ host: mlisten.host, port: mport })} (/health, /zones, /metrics)`)
    for (const name of zones.list().map((z) => z.name)) {
      const zone = zones.get(name)
      if (zone !== undefined) notifier.notify(zone, targets)
    }
    return { health }
  })
}
