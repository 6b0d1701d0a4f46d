/**
 * The verdict for one query: (client address, name) → forward, block, safe search or safe video.
 * One implementation, run by the DNS server for every query and by the block page to explain a
 * block (docs/contract.md, "The verdict for one query"). The order:
 *
 *   1. built-in whitelist → pass            5. user whitelist → pass; user blacklist → block;
 *   2. global whitelist → pass;                 `-` in it → block what the whitelist does not pass
 *      global blacklist → block;             6. safe search on + search engine → safe search
 *      `-` in it → block everything else    7. safe video on + video host → safe video
 *   2b. RPZ feeds (`rpz-feeds`), the first  8. a category of the name in the filter → block
 *      zone that matches → its action       9. otherwise → forward
 *      (passthru: on to step 3)
 *   3. the user owning the address (or the server defaults for an anonymous one)
 *   4. user disabled → pass
 *
 * List entries match the name and all its subdomains. The name arrives as suffix keys
 * (`SuffixKeys`) built from wire labels, so a label holding a dot never reads as two labels.
 *
 * Per-address snapshots (the owner's name and a SharedPolicy: lists and filter as Sets, switches, scheduled
 * rules, interned by content in engine/policy/shared-policy.ts) are cached here, a fixed number of addresses
 * evicted by CLOCK (engine/policy/snapshot-cache.ts). `policy.watcher` (engine/store/generation.ts) reads
 * the store's generation on a timer in the DNS server, per batch in a pool worker and per request in the
 * block page, so an API write is enforced within GENERATION_CHECK_MS. When it moves, the change journal
 * (engine/store/journal.ts) says what the writes touched and only that is dropped (`follow`): the
 * snapshots of the users, addresses, client IDs and prefixes named. One snapshot object is shared by all
 * of a user's addresses, so dropping a user is one flag on it (`stale`), not a walk of the cache. What no
 * snapshot holds (the global lists, the subscriptions, the RPZ feeds, the category tables) is re-read
 * beside the cache and drops nothing. A generation the journal no longer covers, or a global change,
 * drops everything.
 */
import { CategoryDb } from '../catdb/index.js'
import { firstIn, type SuffixKeys } from '../names/index.js'
import {
  CLIENT_ID_PREFIX,
  GenerationWatcher,
  type GenerationWatcherOptions,
  type Store,
  type StoreChanges,
  type UserRecord
} from '../store/index.js'
import { cidrContains, ipBytes, parseCidr, type Cidr } from '../net/index.js'
import { createBuiltinWhitelist, type BuiltinWhitelist } from '../whitelist/index.js'
import { ScheduleBoard, systemClock, type Clock } from '../schedule/index.js'
import { loadSafeHosts, type SafeHosts } from './safe-hosts.js'
import { SubscriptionIndex } from '../lists/index.js'
import { RuleCompiler, type ScheduledPart } from './scheduled.js'
import { SnapshotCache } from './snapshot-cache.js'
import { UserSnapshots } from './user-snapshots.js'
import { NO_NAMES, PolicyInterner, type OwnLists, type SharedPolicy } from './shared-policy.js'
import type { RpzHit, RpzLayer } from '../rpz-feeds/index.js'
import { GlobalAnswers, blackLabel, builtinLabel, whiteLabel } from './global-answers.js'

export { loadSafeHosts, parseSafeHosts, type SafeHosts } from './safe-hosts.js'
export type { SharedPolicy } from './shared-policy.js'

export { HostKeys, type SuffixKeys } from '../names/index.js'

export type Action = 'forward' | 'block' | 'safesearch' | 'safevideo'

export type Reason =
  | 'none'
  | 'builtin-whitelist'
  | 'global-whitelist'
  | 'global-blacklist'
  | 'global-allow-only'
  | 'user-disabled'
  | 'user-whitelist'
  | 'user-blacklist'
  | 'user-allow-only'
  | 'safesearch'
  | 'safevideo'
  | 'category'
  // An RPZ feed (rpz-feeds) decided: `Verdict.rpz` says which zone, trigger and action.
  | 'rpz'
  // A scheduled rule (engine/schedule) decided, while one of its windows was open.
  | 'schedule-whitelist'
  | 'schedule-blacklist'
  | 'schedule-allow-only'
  | 'schedule-category'

const NO_CATS: readonly number[] = Object.freeze([])

/** Stable-shape, reusable result: every field is reset by `evaluate`. */
export class Verdict {
  action: Action = 'forward'
  reason: Reason = 'none'
  /** The user owning the client address; null for an anonymous address. */
  user: string | null = null
  /** The list entry or database key that decided, '' when none. */
  matched = ''
  /** Categories of the name (its site record), filled when known; [] otherwise. Shared: never write it. */
  cats: readonly number[] = NO_CATS
  /** Categories that caused a category block. */
  blockedCats: readonly number[] = NO_CATS
  /** Safe video target, or the search engine's label for safe search. */
  target = ''
  /** The scheduled rule that decided ('' when none) and the index of its open window (-1). */
  schedule = ''
  window = -1
  /** When a scheduled rule touching this name next opens or closes (UTC ms), 0 when none does. */
  changesAt = 0
  /** Seconds until `changesAt` (the answer's TTL must not exceed it), -1 when unscheduled. */
  ttlCap = -1
  /** The time zone of the rule whose boundary is `changesAt`. */
  zone = ''
  /** The RPZ feed that matched (its action may be passthru: then later steps decided), else null. */
  rpz: RpzHit | null = null
  /**
   * Where the deciding entry came from when it was not the operator's own lists or the category database:
   * `list:<id>` (a list subscription, docs/lists.md), `rpz:<zone>` (an RPZ feed, docs/rpz.md); '' otherwise.
   * Filled only when `evaluate` is asked to explain (`wantCats`: statistics on, /check).
   */
  source = ''
}

/** What one address is subject to: its owner and the owner's policy, shared with every equal one. Immutable. */
export interface Snapshot {
  readonly user: string | null
  readonly policy: SharedPolicy
}

/**
 * A snapshot as the cache holds it: one per user (or the anonymous one), shared by all its addresses and
 * client IDs. `stale` once a write touched its owner: the cache then reads it as a miss.
 */
class CachedSnapshot implements Snapshot {
  stale = false
  constructor(
    readonly user: string | null,
    readonly policy: SharedPolicy
  ) {}
}

interface GlobalLists {
  readonly whitelist: ReadonlySet<string>
  readonly blacklist: ReadonlySet<string>
  readonly allowOnly: boolean
}

export interface PolicyOptions {
  store: Store
  categories: CategoryDb
  builtin: BuiltinWhitelist
  safeHosts: SafeHosts
  /** Addresses (and client IDs) whose snapshots are cached; beyond, the least recently used go (CLOCK). */
  maxCachedAddresses?: number
  watcher?: GenerationWatcherOptions
  /** The clock schedules read (default: this process's, engine/schedule/clock.ts). */
  clock?: Clock
  /** The zone of a scheduled rule that names none (`stats.timezone`; default UTC). */
  timeZone?: string
  /** The RPZ feeds (engine/rpz-feeds/feed-set.ts), asked after the global lists; none by default. */
  feeds?: RpzLayer | null
}

/** What createPolicy reads of the config (a Config has it; a pool worker passes just these). */
export interface PolicyConfig {
  readonly proxy: { readonly 'safesearch-hosts'?: string; readonly 'policy-cache-addresses'?: number }
  readonly common: { readonly 'vendor-names': readonly string[] }
  readonly stats?: { readonly timezone?: string }
}

/**
 * The policy over `store` as every role builds it: the category database, the built-in whitelist
 * with `common.vendor-names`, and the safe-search hosts of `proxy.safesearch-hosts` (a process
 * that already holds a CategoryDb, like the api role, passes it).
 */
export function createPolicy(
  config: PolicyConfig,
  store: Store,
  options: {
    safeHosts?: SafeHosts
    categories?: CategoryDb
    watcher?: GenerationWatcherOptions
    clock?: Clock
    feeds?: RpzLayer | null
  } = {}
): Policy {
  return new Policy({
    store,
    categories: options.categories ?? new CategoryDb(store),
    builtin: createBuiltinWhitelist(config.common['vendor-names']),
    safeHosts: options.safeHosts ?? loadSafeHosts(config.proxy['safesearch-hosts']),
    ...(options.watcher === undefined ? {} : { watcher: options.watcher }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.feeds === undefined ? {} : { feeds: options.feeds }),
    ...(config.proxy['policy-cache-addresses'] === undefined
      ? {}
      : { maxCachedAddresses: config.proxy['policy-cache-addresses'] }),
    ...(config.stats?.timezone === undefined ? {} : { timeZone: config.stats.timezone })
  })
}

/** The list entry `-`: in a blacklist, block everything the whitelists do not pass. */
export const ALLOW_ONLY = '-'

function listSet(entries: readonly string[]): { set: ReadonlySet<string>; allowOnly: boolean } {
  const set = new Set<string>()
  let allowOnly = false
  for (const e of entries) {
    if (e === ALLOW_ONLY) allowOnly = true
    else set.add(e)
  }
  return { set: set.size === 0 ? NO_NAMES : set, allowOnly }
}

export class Policy {
  private readonly store: Store
  private readonly categories: CategoryDb
  private readonly safeHosts: SafeHosts
  /** Follows the store's generation; the owner decides when it reads (check, poll or start). */
  readonly watcher: GenerationWatcher
  private global: GlobalLists = { whitelist: new Set(), blacklist: new Set(), allowOnly: false }
  private anonymous: CachedSnapshot | null = null
  private readonly cache: SnapshotCache<CachedSnapshot>
  /** Each user's snapshot, so that a write touching the user marks it stale (at most the cache's size: `keepUsers`). */
  private readonly users = new UserSnapshots<CachedSnapshot>()
  /** The generation the cache reflects: `follow` reads the journal from here. */
  private seen: number
  /** Users (and the server defaults) changed since the last full reload (`outgrown`). */
  private changedUsers = 0
  /** The shared policies and users' lists. */
  private readonly interner = new PolicyInterner()
  /** The subscribed lists (engine/lists), kept current by difference on each generation change. */
  private readonly subscriptions = new SubscriptionIndex()
  /** Steps 1 and 2 per name, kept while the global lists and the subscriptions stay as they are. */
  private readonly globalAnswers: GlobalAnswers
  /** The schedules of this generation's snapshots and their state now (engine/schedule/board.ts). */
  readonly schedules: ScheduleBoard
  private readonly rules: RuleCompiler
  private readonly timeZone: string
  private readonly feeds: RpzLayer | null

  constructor(options: PolicyOptions) {
    this.feeds = options.feeds ?? null
    this.schedules = new ScheduleBoard(options.clock ?? systemClock())
    this.rules = new RuleCompiler(this.schedules)
    this.timeZone = options.timeZone ?? 'UTC'
    this.store = options.store
    this.categories = options.categories
    this.globalAnswers = new GlobalAnswers(options.builtin)
    this.safeHosts = options.safeHosts
    this.cache = new SnapshotCache(options.maxCachedAddresses ?? 100_000)
    this.watcher = new GenerationWatcher(
      this.store,
      (generation) => {
        this.follow(generation)
      },
      options.watcher
    )
    this.seen = this.watcher.generation
    this.reload()
  }

  /** Drops what the writes since the generation last seen touched (the change journal), or everything. */
  private follow(generation: number): void {
    const changes = this.store.changesBetween(this.seen, generation)
    this.seen = generation
    this.changedUsers += changes.users.size + (changes.serverDefaults ? 1 : 0)
    if (changes.global || this.outgrown()) {
      this.reload()
      return
    }
    this.evict(changes)
    if (changes.globalLists) this.loadGlobalLists()
    this.refreshBeside()
  }

  /** Drops every cached snapshot and shared table, and reloads what the snapshots do not hold. */
  private reload(): void {
    this.changedUsers = 0
    this.cache.clear()
    this.users.clear()
    this.interner.clear()
    this.anonymous = null
    this.schedules.clear()
    this.rules.clear()
    this.loadGlobalLists()
    this.refreshBeside()
  }

  /** The cache entries a targeted change touched. */
  private evict(changes: StoreChanges): void {
    for (const user of changes.users) {
      const snap = this.users.get(user)
      if (snap !== undefined) {
        snap.stale = true
        this.users.delete(user)
      }
      this.interner.forgetUser(user)
    }
    for (const address of changes.addresses) this.cache.delete(address)
    for (const id of changes.clientIds) this.cache.delete(CLIENT_ID_PREFIX + id)
    if (changes.prefixes.length > 0) this.evictPrefixes(changes.prefixes)
    if (changes.serverDefaults && this.anonymous !== null) {
      this.anonymous.stale = true
      this.anonymous = null
    }
  }

  /**
   * Every cached address inside a prefix whose owner changed: it may have been anonymous, or a shorter
   * prefix's, and now be this one's (or the reverse). A walk of the cache, for changes that are rare
   * next to those of single users.
   */
  private evictPrefixes(prefixes: readonly string[]): void {
    const cidrs = prefixes.map((p) => parseCidr(p)).filter((c): c is Cidr => c !== undefined)
    if (cidrs.length !== prefixes.length) {
      this.cache.clear()
      return
    }
    this.cache.sweep((key) => {
      if (key.startsWith(CLIENT_ID_PREFIX)) return false
      const bytes = ipBytes(key)
      return bytes === undefined || cidrs.some((c) => cidrContains(c, bytes))
    })
  }

  /**
   * Whether more users have changed since the last full reload than the cache holds. Each change may
   * leave a policy, rules and schedules of content no snapshot has any longer in the shared tables, which
   * only a full reload drops (they are keyed by content, not by user): bounding the changes bounds them
   * to about the cache's size, at the cost of one full reload per that many changes.
   */
  private outgrown(): boolean {
    return this.changedUsers > this.cache.limit
  }

  private loadGlobalLists(): void {
    const white = listSet(this.store.getList(null, 'white'))
    const black = listSet(this.store.getList(null, 'black'))
    this.global = { whitelist: white.set, blacklist: black.set, allowOnly: black.allowOnly }
    this.globalAnswers.clear()
  }

  /**
   * What the steps read beside the snapshots, re-read on every generation change (each is cheap when
   * unchanged): the subscriptions by difference, the category tables (a rebuild bumps the generation)
   * and the RPZ feeds (so does a new serial).
   */
  private refreshBeside(): void {
    const revision = this.subscriptions.revision
    this.subscriptions.refresh(this.store)
    if (this.subscriptions.revision !== revision) this.globalAnswers.clear()
    this.categories.refresh()
    this.feeds?.refresh?.()
  }

  /** The policy that applies to `address` (canonical text; see engine/net/ip.ts). */
  snapshotFor(address: string): Snapshot {
    const cached = this.cache.get(address)
    if (cached !== undefined && !cached.stale) return cached
    const userId = this.store.userForAddress(address)
    const user = userId === undefined ? undefined : this.store.getUser(userId)
    const snap = user === undefined ? this.anonymousCached() : this.userSnapshot(user)
    this.cache.set(address, snap)
    return snap
  }

  /**
   * Snapshots stored in the cache since this policy was made (its misses): an entry evicted by a write
   * or by the CLOCK hand counts again when it is stored again.
   */
  get snapshotsBuilt(): number {
    return this.cache.stored
  }

  /** Addresses (and client IDs) whose snapshot the cache holds now. */
  get cachedAddresses(): number {
    return this.cache.size
  }

  /**
   * The policy of the user holding `clientId` (lower case: a DoH path's or DoT server name's client ID),
   * whatever address it queries from; `undefined` for an ID no user holds. Cached with the addresses
   * (an `id:` key is never an address's text).
   */
  snapshotForClientId(clientId: string): Snapshot | undefined {
    const key = CLIENT_ID_PREFIX + clientId
    const cached = this.cache.get(key)
    if (cached !== undefined && !cached.stale) return cached
    const userId = this.store.userForClientId(clientId)
    const user = userId === undefined ? undefined : this.store.getUser(userId)
    if (user === undefined) return undefined
    const snap = this.userSnapshot(user)
    this.cache.set(key, snap)
    return snap
  }

  /**
   * The policy of the user named `userId`, whatever address it queries from (the operator console's
   * "check a domain" for a user, engine-side so it cannot differ from the DNS server's); `undefined`
   * for an unknown user. Not cached: it is for explaining, not for the packet path.
   */
  snapshotForUser(userId: string): Snapshot | undefined {
    this.watcher.check()
    const user = this.store.getUser(userId)
    if (user === undefined) return undefined
    return this.userSnapshot(user)
  }

  /**
   * `user`'s snapshot as just read: the one its other addresses share when its policy is the same, else
   * a new one, and the one held is marked stale (the record changed and the watcher has not yet said so:
   * its other addresses read it afresh too).
   */
  private userSnapshot(user: UserRecord): CachedSnapshot {
    const content = {
      enabled: user.status === 'enabled',
      safesearch: user.safesearch === 'on',
      safevideo: user.safeyoutube === 'on',
      filter: user.filter,
      scheduled: this.rules.part(user.schedules, this.timeZone)
    }
    const policy = this.interner.policyOf(user.name, content, () => this.ownLists(user.name))
    const held = this.users.get(user.name)
    if (held !== undefined) {
      if (held.policy === policy) return held
      held.stale = true
    }
    const snap = new CachedSnapshot(user.name, policy)
    if (this.users.size >= 2 * this.cache.limit) this.keepUsers()
    this.users.set(snap)
    return snap
  }

  /**
   * Keeps only the users the cache still references: a user whose addresses the CLOCK hand evicted
   * needs no entry (nothing cached can go stale). A walk of the cache, at most once per `limit` new users.
   */
  private keepUsers(): void {
    this.users.clear()
    for (const snap of this.cache.entries()) if (snap.user !== null && !snap.stale) this.users.set(snap)
  }

  private ownLists(user: string): OwnLists {
    const white = listSet(this.store.getList(user, 'white'))
    const black = listSet(this.store.getList(user, 'black'))
    // An empty list is the shared one: most users with lists have only one of the two.
    return {
      whitelist: white.set.size === 0 ? NO_NAMES : white.set,
      blacklist: black.set.size === 0 ? NO_NAMES : black.set,
      allowOnly: black.allowOnly
    }
  }

  /** The server defaults of `/config/`: what an address no user owns gets. */
  anonymousSnapshot(): Snapshot {
    return this.anonymousCached()
  }

  private anonymousCached(): CachedSnapshot {
    if (this.anonymous !== null) return this.anonymous
    const d = this.store.getServerDefaults()
    const policy = this.interner.policy({
      enabled: true,
      safesearch: d.safesearch,
      safevideo: d.safeyoutube,
      filter: d.filter,
      scheduled: this.rules.part(d.schedules, this.timeZone)
    })
    this.anonymous = new CachedSnapshot(null, policy)
    return this.anonymous
  }

  /**
   * Judges `keys` for the client at `address` into `out`. `wantCats` also fills `out.cats` when
   * an earlier step decided (the statistics record wants the name's categories).
   */
  evaluate(address: string, keys: SuffixKeys, out: Verdict, wantCats = false): Verdict {
    return this.evaluateSnapshot(this.snapshotFor(address), keys, out, wantCats, address)
  }

  /**
   * Judges `keys` under a given snapshot (`snapshotFor`, `snapshotForUser`): the steps of `evaluate`.
   * `client` is the address the RPZ feeds' CLIENT-IP triggers see ('' when there is none to judge by).
   */
  evaluateSnapshot(snap: Snapshot, keys: SuffixKeys, out: Verdict, wantCats = false, client = ''): Verdict {
    out.action = 'forward'
    out.reason = 'none'
    out.matched = ''
    out.cats = NO_CATS
    out.blockedCats = NO_CATS
    out.target = ''
    out.user = snap.user
    out.schedule = ''
    out.window = -1
    out.changesAt = 0
    out.ttlCap = -1
    out.zone = ''
    out.rpz = null
    out.source = ''
    const p = snap.policy
    const part = p.scheduled
    if (part === undefined) return this.steps(p, null, keys, out, wantCats, client)
    // Switches the schedules whose boundary this instant has reached, if the timer has not yet.
    const now = this.schedules.now()
    part.sync(this.schedules.epoch)
    this.steps(p, part, keys, out, wantCats, client)
    part.annotate(keys, out, now)
    return out
  }

  /** Steps 1 to 9: each of the owner's lists, then the open scheduled rules' (`part`) of the same kind. */
  private steps(
    snap: SharedPolicy,
    part: ScheduledPart | null,
    keys: SuffixKeys,
    out: Verdict,
    wantCats: boolean,
    client: string
  ): Verdict {
    if (this.decideLists(snap, part, keys, out, client)) {
      if (wantCats) {
        this.fillCats(keys, out, null)
        this.nameSource(out)
      }
      return out
    }
    const name = keys.suffix(0)
    if (snap.safesearch) {
      const engine = this.safeHosts.searchEngine(name)
      if (engine !== undefined) return this.finish(out, 'safesearch', 'safesearch', name, engine, keys, wantCats)
    }
    if (snap.safevideo) {
      const target = this.safeHosts.videoTarget(name)
      if (target !== undefined) return this.finish(out, 'safevideo', 'safevideo', name, target, keys, wantCats)
    }
    this.fillCats(keys, out, snap.filter, part)
    if (out.blockedCats.length > 0) {
      out.action = 'block'
      out.reason = 'category'
      if (part !== null) part.nameCategoryRule(out, snap.filter)
      if (wantCats) this.nameCategorySource(keys, out)
    }
    return out
  }

  /** `out.source` of a list step: the feed, or the subscription that listed a global list's entry. */
  private nameSource(out: Verdict): void {
    if (out.rpz !== null && out.reason === 'rpz') {
      out.source = 'rpz:' + out.rpz.zone
      return
    }
    const global =
      out.reason === 'global-blacklist'
        ? this.global.blacklist
        : out.reason === 'global-whitelist'
          ? this.global.whitelist
          : null
    if (global === null || global.has(out.matched)) return
    const id = this.subscriptions.sourceOf(
      this.store,
      out.matched,
      out.reason === 'global-blacklist' ? 'black' : 'white'
    )
    if (id !== '') out.source = 'list:' + id
  }

  /** `out.source` of a category block when a category subscription, not the database, gave a blocking category. */
  private nameCategorySource(keys: SuffixKeys, out: Verdict): void {
    const listed = this.subscriptions.categoriesOf(keys)
    if (listed === undefined) return
    const db = this.categories.findRaw(keys)?.cats ?? NO_CATS
    const given = out.blockedCats.find((c) => !db.includes(c) && listed.cats.includes(c))
    if (given === undefined) return
    const id = this.subscriptions.sourceOf(this.store, listed.key, given)
    if (id !== '') out.source = 'list:' + id
  }

  /** Steps 1, 2, 2b, 4 and 5; true when they decided. */
  private decideLists(
    snap: SharedPolicy,
    part: ScheduledPart | null,
    keys: SuffixKeys,
    out: Verdict,
    client: string
  ): boolean {
    const g = this.global
    // Subscriptions mapped to the global lists come after the operator's own entries of each list.
    const answer = this.globalAnswers.of(keys, g, this.subscriptions)
    let at = builtinLabel(answer)
    if (at !== 0) return this.decide(out, 'forward', 'builtin-whitelist', keys.suffix(at - 1))
    at = whiteLabel(answer)
    if (at !== 0) return this.decide(out, 'forward', 'global-whitelist', keys.suffix(at - 1))
    at = blackLabel(answer)
    if (at !== 0) return this.decide(out, 'block', 'global-blacklist', keys.suffix(at - 1))
    if (g.allowOnly) return this.decide(out, 'block', 'global-allow-only', ALLOW_ONLY)
    if (this.feeds !== null && this.decideFeeds(keys, out, client)) return true
    if (!snap.enabled) return this.decide(out, 'forward', 'user-disabled', '')
    let hit = firstIn(snap.whitelist, keys)
    if (hit !== '') return this.decide(out, 'forward', 'user-whitelist', hit)
    if (part !== null && part.white(keys, out)) return true
    hit = firstIn(snap.blacklist, keys)
    if (hit !== '') return this.decide(out, 'block', 'user-blacklist', hit)
    if (part !== null && part.black(keys, out)) return true
    if (snap.allowOnly) return this.decide(out, 'block', 'user-allow-only', ALLOW_ONLY)
    return part !== null && part.allowOnly(out)
  }

  /**
   * Step 2b: the RPZ feeds, after the operator's global lists (which correct a feed's false positive)
   * and before everything of the user (a regulator's feed holds for every subscriber). A passthru
   * ends the feeds' say but not the policy's: the user's steps still decide.
   */
  private decideFeeds(keys: SuffixKeys, out: Verdict, client: string): boolean {
    const hit = this.feeds!.match(keys.suffix(0), client) // feeds checked non-null by the caller
    if (hit === undefined) return false
    out.rpz = hit
    if (hit.action.kind === 'passthru') return false
    if (hit.category !== null) out.blockedCats = [hit.category]
    return this.decide(out, 'block', 'rpz', hit.trigger)
  }

  private decide(out: Verdict, action: Action, reason: Reason, matched: string): true {
    out.action = action
    out.reason = reason
    out.matched = matched
    return true
  }

  private finish(
    out: Verdict,
    action: Action,
    reason: Reason,
    matched: string,
    target: string,
    keys: SuffixKeys,
    wantCats: boolean
  ): Verdict {
    out.action = action
    out.reason = reason
    out.matched = matched
    out.target = target
    if (wantCats) this.fillCats(keys, out, null)
    return out
  }

  /** The name's categories (the category database's suffix walk), and those in `filter` or an open rule's. */
  private fillCats(
    keys: SuffixKeys,
    out: Verdict,
    filter: ReadonlySet<number> | null,
    part: ScheduledPart | null = null
  ): void {
    let hit: { readonly key: string; readonly cats: readonly number[] } | undefined = this.categories.findRaw(keys)
    // Categories subscriptions give the name join the database's (engine/lists): a new array, never the shared one.
    const listed = this.subscriptions.categoriesOf(keys)
    if (listed !== undefined)
      hit = { key: hit?.key ?? listed.key, cats: [...new Set([...(hit?.cats ?? []), ...listed.cats])] }
    if (hit === undefined) return
    // Shared with every lookup of this name (frozen): a verdict reads its categories, never writes them.
    const cats = hit.cats
    out.cats = cats
    if (filter === null) return
    let blocked: number[] | null = null
    // The open scheduled rules' categories, switched at their boundary (engine/policy/scheduled.ts).
    const open = part === null ? null : part.openFilter
    for (const c of cats) if (filter.has(c) || (open !== null && open.has(c))) (blocked ??= []).push(c)
    if (blocked !== null) {
      out.blockedCats = blocked
      out.matched = hit.key
    }
  }
}
