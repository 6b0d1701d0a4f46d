/**
 * The RPZ feeds as the one process per host that transfers them holds them (RPZ in; the dns role's
 * primary, `startFeedTransfers`): the followers of `rpz-feeds.feeds` in precedence order, the NOTIFY
 * listener, and the feeds' status. It writes them into the store, where the processes that judge read
 * them (`storedFeedsFromConfig`, engine/rpz-feeds/feed-store.ts). It is a policy layer too (for tests of
 * the followers): `match` asks the feeds in order and the first zone that matches decides (draft-ietf-dnsop-dns-rpz
 * 5.1), with the feed's configured override applied. A feed that has never loaded, or has expired,
 * is skipped; a failed refresh leaves the feed's previous copy in place (engine/rpz-feeds/follower.ts).
 */
import { parseHostPort } from '../config/index.js'
import type { Config } from '../config/index.js'
import type { Logger } from '../log/index.js'
import type { FeedAction } from './feed.js'
import { feedLimits, feedSettings, overridden, type FeedLimits, type FeedSettings } from './feed-config.js'
import { FeedFollower, listenForNotify, type FeedStatus } from './follower.js'
import { FeedStoreWriter, StoredFeeds } from './feed-store.js'
import type { Store } from '../store/index.js'

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
  /** Called by the policy when the store's generation moves (a layer read from the store reads it again). */
  refresh?(): void
}

/** One feed's state for /metrics. */
export interface FeedReport extends FeedStatus {
  /** NSDNAME, NSIP and response-IP triggers held but not enforced. */
  unsupported: number
}

/** Logs what a refresh did: the caller's logger, or nothing. */
export type FeedLog = (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void

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
  /** Loads each feed once (awaited unless `firstInBackground`: a follower logs its own failures) and binds notify-listen. */
  async start(firstInBackground = false): Promise<void> {
    const first = Promise.all(this.followers.map((f) => f.start()))
    if (!firstInBackground) await first
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
 * Follows the feeds of `config` and keeps their copy in `store` (engine/rpz-feeds/feed-store.ts): the one
 * process per host that transfers them (the dns role's primary process) starts them this way. Each
 * feed's first load is done (or has failed, and retries) and written when it resolves, and
 * `notify-listen` is bound; every refresh is logged to `logger`. Null when the config has no feeds.
 */
export async function startFeedTransfers(
  config: Pick<Config, 'rpz-feeds'>,
  store: Store,
  logger: Pick<Logger, 'info' | 'warn'>
): Promise<RpzFeeds | null> {
  const feeds = feedsFromConfig(config, (level, fields, msg) => logger[level](fields, msg))
  if (feeds === null) return null
  const writer = new FeedStoreWriter(store)
  for (const f of feeds.followers)
    f.afterUpdate = async () => {
      const c = f.status.counts
      const report = { ...f.status, unsupported: c === null ? 0 : c.nsdname + c.nsip + c.responseIp }
      try {
        await writer.update(f.feed, f.change, report)
      } catch (err) {
        logger.warn(
          { zone: f.zone, err: (err as Error).message },
          `rpz feed ${f.zone}: cannot write it into the store (${(err as Error).message})`
        )
      }
    }
  // With every feed already in the store the processes that judge can answer from it at once: the
  // first transfer (a whole zone, of millions of records at an ISP) goes on behind them.
  await feeds.start(feeds.followers.every((f) => writer.holds(f.zone)))
  return feeds
}

/** The feeds of `config` as every process that judges reads them from `store`; null when it has none. */
export function storedFeedsFromConfig(config: Pick<Config, 'rpz-feeds'>, store: Store): StoredFeeds | null {
  const section = config['rpz-feeds']
  if (section.feeds.length === 0) return null
  return new StoredFeeds(store, feedSettings(section))
}
