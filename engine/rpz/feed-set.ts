/**
 * The RPZ feeds a process enforces (RPZ in), as one policy layer (engine/policy): the followers of
 * `rpz-feeds.feeds` in precedence order, the NOTIFY listener, and the feeds' status for /metrics.
 * `match` asks the feeds in order and the first zone that matches decides (draft-ietf-dnsop-dns-rpz
 * 5.1), with the feed's configured override applied. A feed that has never loaded, or has expired,
 * is skipped; a failed refresh leaves the feed's previous copy in place (engine/rpz/follower.ts).
 */
import { parseHostPort } from '../config/address.js'
import type { Config } from '../config/types.js'
import type { Logger } from '../log/index.js'
import type { FeedAction } from './feed.js'
import { feedLimits, feedSettings, type FeedLimits, type FeedSettings } from './feed-config.js'
import { FeedFollower, listenForNotify, type FeedStatus } from './follower.js'

/** What a feed decided for one query: its zone, the trigger, the answer, and the category it reports. */
export interface RpzHit {
  readonly zone: string
  readonly trigger: string
  /** After the feed's override; `block` is filterd's own block answer. */
  readonly action: FeedAction | { readonly kind: 'block' }
  readonly category: number | null
}

/** The layer the policy asks (a test may hand the policy its own). */
export interface RpzLayer {
  match(name: string, client: string): RpzHit | undefined
}

/** One feed's state for /metrics. */
export interface FeedReport extends FeedStatus {
  /** NSDNAME, NSIP and response-IP triggers held but not enforced. */
  unsupported: number
}

/** Logs what a refresh did: the caller's logger, or nothing. */
export type FeedLog = (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void

const PASS: FeedAction = { kind: 'passthru' }

/** `action` under the feed's override (`zone` keeps it; passthru stays passthru whatever the override). */
function overridden(action: FeedAction, override: FeedSettings['action']): RpzHit['action'] {
  if (override === 'zone' || action.kind === 'passthru') return action
  if (override === 'passthru') return PASS
  return { kind: override }
}

export class RpzFeeds implements RpzLayer {
  private readonly settings: readonly FeedSettings[]
  readonly followers: readonly FeedFollower[]
  private notify: { port: number; close(): void } | null = null
  private readonly notifyListen: string | undefined
  private readonly log: FeedLog

  constructor(settings: readonly FeedSettings[], limits: FeedLimits, log: FeedLog = () => {}, notifyListen?: string) {
    this.settings = settings
    this.log = log
    this.notifyListen = notifyListen
    this.followers = settings.map(
      (s) =>
        new FeedFollower({
          zone: s.zone,
          ...(s.file === undefined ? {} : { file: s.file }),
          ...(s.primary === undefined ? {} : { primary: s.primary }),
          ...(s.key === undefined ? {} : { key: s.key }),
          fileRefresh: limits.fileRefresh,
          maxRecords: limits.maxRecords,
          maxBytes: limits.maxBytes,
          timeoutMs: limits.timeoutMs
        })
    )
    for (const f of this.followers) f.onUpdate = (status, err) => this.logged(status, err)
  }

  private logged(status: FeedStatus, err?: Error): void {
    const fields = { zone: status.zone, serial: status.serial, records: status.records, state: status.state }
    const c = status.counts
    if (err === undefined) {
      this.log('info', fields, `rpz feed ${status.zone}: serial ${status.serial} enforced`)
      const unsupported = c === null ? 0 : c.nsdname + c.nsip + c.responseIp
      if (unsupported > 0)
        this.log(
          'warn',
          { ...fields, nsdname: c!.nsdname, nsip: c!.nsip, responseIp: c!.responseIp }, // unsupported > 0: counts set
          `rpz feed ${status.zone}: ${unsupported} triggers not enforced (NSDNAME ${c!.nsdname}, NSIP ${c!.nsip}, response IP ${c!.responseIp}): a forwarder cannot evaluate them`
        )
    } else
      this.log(
        'warn',
        { ...fields, err: err.message, errors: status.errors },
        `rpz feed ${status.zone}: refresh failed (${err.message}); ${status.serial === null ? 'nothing enforced yet' : `serial ${status.serial} stays enforced`}`
      )
  }

  /** Loads every feed once (a failure is reported, not thrown: the feed retries) and opens the NOTIFY listener. */
  async start(): Promise<void> {
    await Promise.all(this.followers.map((f) => f.start()))
    if (this.notifyListen === undefined) return
    const hp = parseHostPort(this.notifyListen)
    const primaries = new Map<string, string>()
    this.settings.forEach((s) => {
      if (s.primary !== undefined) primaries.set(s.zone, s.primary.host)
    })
    this.notify = await listenForNotify(hp.host, hp.port, this.followers, primaries)
  }

  /** The port NOTIFYs are taken on (null without `notify-listen`). */
  get notifyPort(): number | null {
    return this.notify?.port ?? null
  }

  match(name: string, client: string): RpzHit | undefined {
    for (let i = 0; i < this.followers.length; i++) {
      const feed = this.followers[i]!.feed
      if (feed === undefined) continue
      const m = feed.match(name, client === '' ? undefined : client)
      if (m === undefined) continue
      const s = this.settings[i]!
      return { zone: feed.origin, trigger: m.trigger, action: overridden(m.action, s.action), category: s.category }
    }
    return undefined
  }

  reports(): FeedReport[] {
    return this.followers.map((f) => {
      const c = f.status.counts
      return { ...f.status, unsupported: c === null ? 0 : c.nsdname + c.nsip + c.responseIp }
    })
  }

  close(): void {
    for (const f of this.followers) f.close()
    this.notify?.close()
  }
}

/** The feeds of `config` (not started), or null when it has none. */
export function feedsFromConfig(config: Pick<Config, 'rpz-feeds'>, log?: FeedLog): RpzFeeds | null {
  const section = config['rpz-feeds']
  if (section.feeds.length === 0) return null
  return new RpzFeeds(feedSettings(section), feedLimits(section), log, section['notify-listen'])
}

/**
 * The feeds of `config`, loaded once (each feed's first load done, failed ones retrying) and
 * logging every refresh to `logger`; null when the config has none. Every role whose policy must
 * agree with the DNS server's (dns, blockpage, api) starts them this way.
 */
export async function startConfiguredFeeds(
  config: Pick<Config, 'rpz-feeds'>,
  logger: Pick<Logger, 'info' | 'warn'>
): Promise<RpzFeeds | null> {
  const feeds = feedsFromConfig(config, (level, fields, msg) => logger[level](fields, msg))
  await feeds?.start()
  return feeds
}
