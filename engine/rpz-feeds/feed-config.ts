/**
 * The `rpz-feeds` section of the config (RPZ in) as the feed set reads it, and the checks JSON Schema
 * cannot say: a feed is a file or a primary (not both, not neither), a primary is an address, a TSIG
 * key is usable and goes with a primary, and zones are unique.
 */
import { parseHostPort } from '../config/index.js'
import type { Config } from '../config/index.js'
import { tsigKey, type TsigKey } from '../rpz-zones/index.js'
import type { FeedAction } from './feed.js'
import type { RpzHit } from './feed-set.js'

/** What a feed's triggers are answered with: the zone's own actions, or one override. */
export type FeedOverride = 'zone' | 'block' | 'nxdomain' | 'nodata' | 'drop' | 'passthru'

export interface FeedSettings {
  zone: string
  file?: string
  primary?: { host: string; port: number }
  key?: TsigKey
  action: FeedOverride
  /** The category the feed's blocks are reported as, or null. */
  category: number | null
}

export interface FeedLimits {
  maxRecords: number
  maxBytes: number
  fileRefresh: number
  timeoutMs: number
}

type FeedsSection = Config['rpz-feeds']
type ConfigFeed = FeedsSection['feeds'][number]

function canonicalZone(zone: string): string {
  return zone.toLowerCase().replace(/\.$/, '')
}

/** One feed's problems, each naming its key (`rpz-feeds.feeds[i].KEY`). */
function feedProblems(f: ConfigFeed, at: string): string[] {
  const problems: string[] = []
  if ((f.file === undefined) === (f.primary === undefined))
    problems.push(`${at}: needs exactly one of file and primary`)
  if (f.primary !== undefined) {
    try {
      parseHostPort(f.primary, 53)
    } catch (err) {
      problems.push(`${at}.primary: ${(err as Error).message}`)
    }
  }
  const key = f['tsig-key']
  if (key !== undefined) {
    if (f.primary === undefined) problems.push(`${at}.tsig-key: goes with primary (a zone file is not transferred)`)
    try {
      tsigKey(key.name, key.algorithm, key.secret)
    } catch (err) {
      problems.push(`${at}.tsig-key: ${(err as Error).message}`)
    }
  }
  return problems
}

/** The config's problems with `rpz-feeds`, each naming its key. */
export function feedConfigProblems(config: Pick<Config, 'rpz-feeds' | 'proxy'>): string[] {
  const section = config['rpz-feeds']
  const problems: string[] = []
  const seen = new Set<string>()
  section.feeds.forEach((f, i) => {
    const at = `rpz-feeds.feeds[${i}]`
    const zone = canonicalZone(f.zone)
    if (seen.has(zone)) problems.push(`${at}.zone: "${f.zone}" is taken in by an earlier feed`)
    seen.add(zone)
    problems.push(...feedProblems(f, at))
  })
  if (section['notify-listen'] !== undefined) {
    try {
      parseHostPort(section['notify-listen'])
    } catch (err) {
      problems.push(`rpz-feeds.notify-listen: ${(err as Error).message}`)
    }
  }
  return problems
}

/** The feeds of a checked config, in precedence order. */
export function feedSettings(section: FeedsSection): FeedSettings[] {
  return section.feeds.map((f) => {
    const key = f['tsig-key']
    const primary = f.primary === undefined ? undefined : parseHostPort(f.primary, 53)
    return {
      zone: canonicalZone(f.zone),
      ...(f.file === undefined ? {} : { file: f.file }),
      ...(primary === undefined ? {} : { primary: { host: primary.host, port: primary.port } }),
      ...(key === undefined ? {} : { key: tsigKey(key.name, key.algorithm, key.secret) }),
      action: f.action,
      category: f.category ?? null
    }
  })
}

export function feedLimits(section: FeedsSection): FeedLimits {
  return {
    maxRecords: section['max-records'],
    maxBytes: section['max-bytes'],
    fileRefresh: section['file-refresh'],
    timeoutMs: section['transfer-timeout'] * 1000
  }
}

const PASS: FeedAction = { kind: 'passthru' }

/** `action` under the feed's override (`zone` keeps it; passthru stays passthru whatever the override). */
export function overridden(action: FeedAction, override: FeedSettings['action']): RpzHit['action'] {
  if (override === 'zone' || action.kind === 'passthru') return action
  if (override === 'passthru') return PASS
  return { kind: override }
}
