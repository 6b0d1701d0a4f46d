/**
 * The refresher of subscribed lists (docs/lists.md), run by the api role, the store's writer. Every
 * `TICK_MS` it looks at each enabled source's state in the store; a source whose `nextDue` passed is
 * downloaded (conditionally: ETag, If-Modified-Since), parsed, checked against the limits, and its
 * difference applied (engine/lists/apply.ts). Its state, in the store too, says when it is due next:
 * `interval` seconds later plus up to `jitter` of it at random, or `retry` seconds after a failure.
 *
 * Any failure (HTTP error, timeout, a body cut short or too large, too many invalid lines or entries,
 * an empty copy of a list that had entries) keeps the entries the store holds: they are the last good
 * copy, on disk on every host, and a restart keeps them and their validators.
 *
 * With Redis (`common.redis-ip`) every api host runs a refresher over the same shared state; before a
 * download a host takes the source's claim in Redis (engine/replica/claim.ts), so one host fetches and
 * the difference it writes reaches every host through the shared store.
 */
import { hostname } from 'node:os'
import type { Logger } from '../log/index.js'
import type { Store } from '../store/index.js'
import { applyEntries, removeSource, type Difference } from './apply.js'
import { fetchList, isListFetchError, listFetchError, type Validators } from './fetch.js'
import {
  entryTargetOf,
  sourceState,
  stateKey,
  statedIds,
  storedSources,
  type ListSource,
  type ListState
} from './keys.js'
import { parseList } from './parse.js'

export interface RefresherSettings {
  readonly interval: number
  readonly jitter: number
  readonly retry: number
  readonly timeout: number
  readonly 'max-bytes': number
  readonly 'max-entries': number
  readonly 'max-invalid': number
}

/** engine/replica/claim.ts's PeriodClaim, as the refresher uses it. */
export interface RefreshClaim {
  take(ms: number): Promise<boolean>
}

export interface RefresherOptions {
  readonly store: Store
  readonly settings: RefresherSettings
  /** Sources of the config file (`lists.sources`); the API's are in the store. */
  readonly configSources: readonly ListSource[]
  readonly logger: Logger
  /** With Redis: the claim of one source, so one host fetches it. */
  readonly claim?: (id: string) => RefreshClaim
  readonly host?: string
  readonly now?: () => number
  readonly random?: () => number
  readonly tickMs?: number
}

export type RefreshOutcome =
  | ({ readonly status: 'changed'; readonly entries: number } & Difference)
  | { readonly status: 'unchanged'; readonly entries: number }
  | { readonly status: 'failed'; readonly error: string }
  | { readonly status: 'skipped'; readonly why: string }

const TICK_MS = 5000

/** The `lists` section's defaults (engine/config/schema.ts), for a server built without a config. */
export const DEFAULT_LIST_SETTINGS: RefresherSettings = {
  interval: 86400,
  jitter: 0.1,
  retry: 900,
  timeout: 120,
  'max-bytes': 67108864,
  'max-entries': 2000000,
  'max-invalid': 0.5
}

export class ListRefresher {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private readonly inFlight = new Map<string, Promise<RefreshOutcome>>()
  private readonly now: () => number
  private readonly random: () => number
  private readonly host: string
  private closed = false

  constructor(private readonly options: RefresherOptions) {
    this.now = options.now ?? Date.now
    this.random = options.random ?? Math.random
    this.host = options.host ?? hostname()
  }

  /** Config sources, then the API's (a config id wins: the API refuses to add one). */
  sources(): ListSource[] {
    const ids = new Set(this.options.configSources.map((s) => s.id))
    return [...this.options.configSources, ...storedSources(this.options.store).filter((s) => !ids.has(s.id))]
  }

  isConfigSource(id: string): boolean {
    return this.options.configSources.some((s) => s.id === id)
  }

  /** Runs a pass every tick, the first one tick from now. The timer alone keeps no process alive. */
  start(): void {
    const every = this.options.tickMs ?? TICK_MS
    const tick = (): void => {
      this.running = this.tick()
        .catch((err: unknown) => {
          this.options.logger.warn({ err: (err as Error).message }, 'list refresher pass failed')
        })
        .finally(() => {
          this.running = undefined
          if (!this.closed) this.timer = setTimeout(tick, every).unref()
        })
    }
    this.timer = setTimeout(tick, every).unref()
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    await this.running
    await Promise.allSettled(this.inFlight.values())
  }

  /** One pass: every due source refreshed, one at a time; sources that are gone cleaned up. */
  async tick(): Promise<void> {
    const sources = this.sources()
    for (const source of sources) {
      if (this.closed) return
      if (!source.enabled || !this.due(source)) continue
      await this.refresh(source, false)
    }
    await this.removeOrphans(new Set(sources.map((s) => s.id)))
  }

  private due(source: ListSource): boolean {
    const state = sourceState(this.options.store, source.id)
    return state === undefined || this.now() >= state.nextDue || state.entryTarget !== entryTargetOf(source)
  }

  /** Refreshes `source` now (the API's "refresh" asks with `force`: even when not due, and without validators). */
  async refresh(source: ListSource, force: boolean): Promise<RefreshOutcome> {
    const pending = this.inFlight.get(source.id)
    if (pending !== undefined) return await pending
    const run = this.claimAndRun(source, force).finally(() => this.inFlight.delete(source.id))
    this.inFlight.set(source.id, run)
    return await run
  }

  private async claimAndRun(source: ListSource, force: boolean): Promise<RefreshOutcome> {
    // An operator's "refresh now" fetches on the host asked; two hosts applying a copy at once is
    // safe (each write records only what it changed), the claim only saves the timers a double fetch.
    const claim = force ? undefined : this.options.claim?.(source.id)
    if (claim !== undefined) {
      // Held for the download and its writes; left to lapse, so a host whose replica has not yet
      // applied the new state does not fetch again right after.
      const ms = this.options.settings.timeout * 1000 + 30_000
      let taken: boolean
      try {
        taken = await claim.take(ms)
      } catch (err) {
        this.options.logger.warn(
          { source: source.id, err: (err as Error).message },
          'list refresh: no claim from Redis'
        )
        return { status: 'skipped', why: 'Redis did not answer' }
      }
      if (!taken) return { status: 'skipped', why: 'another host holds the refresh' }
    }
    return await this.run(source, force)
  }

  private async run(source: ListSource, force: boolean): Promise<RefreshOutcome> {
    const { store, settings, logger } = this.options
    const prev = sourceState(store, source.id)
    const target = entryTargetOf(source)
    const started = this.now()
    // A changed target rewrites every entry: download it whole.
    const validators: Validators | undefined =
      force || prev === undefined || prev.entryTarget !== target
        ? undefined
        : { etag: prev.etag, lastModified: prev.lastModified }
    try {
      const got = await fetchList(source.url, validators, {
        timeoutMs: settings.timeout * 1000,
        maxBytes: settings['max-bytes']
      })
      if (got.status === 'unchanged') {
        const state = this.succeeded(source, prev, target, started)
        await store.write((w) => w.putSubscriptionValue(stateKey(source.id), state))
        logger.debug({ source: source.id }, 'list unchanged (304)')
        return { status: 'unchanged', entries: state.entries }
      }
      const parsed = parseList(got.body, source.format)
      this.check(parsed.entries.size, parsed.invalid, parsed.lines, prev)
      const state: ListState = {
        ...this.succeeded(source, prev, target, started),
        entries: parsed.entries.size,
        bytes: got.bytes,
        invalid: parsed.invalid,
        skipped: parsed.skipped
      }
      delete state.etag
      delete state.lastModified
      if (got.validators.etag !== undefined) state.etag = got.validators.etag
      if (got.validators.lastModified !== undefined) state.lastModified = got.validators.lastModified
      const diff = await applyEntries(store, source.id, parsed.entries, target, (w, d) => {
        const changed = d.added + d.removed + d.moved > 0
        w.putSubscriptionValue(stateKey(source.id), changed ? { ...state, lastChange: started } : state)
      })
      logger.info(
        { source: source.id, entries: parsed.entries.size, ...diff, invalid: parsed.invalid },
        'list refreshed'
      )
      return { status: 'changed', entries: parsed.entries.size, ...diff }
    } catch (err) {
      return await this.failed(source, prev, target, started, err)
    }
  }

  /** The limits on a parsed copy; throws a `refused` ListFetchError. */
  private check(entries: number, invalid: number, lines: number, prev: ListState | undefined): void {
    const { settings } = this.options
    const refuse = (why: string): never => {
      throw listFetchError('refused', why)
    }
    if (entries > settings['max-entries'])
      refuse(`${entries} entries, more than lists.max-entries (${settings['max-entries']})`)
    if (lines > 0 && invalid / lines > settings['max-invalid'])
      refuse(`${invalid} of ${lines} lines invalid, more than lists.max-invalid (${settings['max-invalid']})`)
    if (entries === 0 && prev !== undefined && prev.entries > 0)
      refuse(`the copy holds no entries where the last good one held ${prev.entries}`)
  }

  /** When a source is due after an attempt: `seconds` later, plus up to `jitter` of that at random. */
  private dueAfter(seconds: number, from: number): number {
    return from + Math.round(seconds * 1000 * (1 + this.options.settings.jitter * this.random()))
  }

  /** The state after an attempt that succeeded (the previous counts, which a new copy replaces). */
  private succeeded(
    source: ListSource,
    prev: ListState | undefined,
    target: ListState['entryTarget'],
    started: number
  ): ListState {
    return {
      ...(prev ?? { entries: 0, lastChange: 0, bytes: 0, invalid: 0, skipped: 0, errors: 0 }),
      entryTarget: target,
      lastAttempt: started,
      lastSuccess: this.now(),
      nextDue: this.dueAfter(source.interval ?? this.options.settings.interval, started),
      consecutiveErrors: 0,
      host: this.host
    }
  }

  private async failed(
    source: ListSource,
    prev: ListState | undefined,
    target: ListState['entryTarget'],
    started: number,
    err: unknown
  ): Promise<RefreshOutcome> {
    const message = isListFetchError(err) ? err.message : String(err)
    this.options.logger.warn(
      { source: source.id, url: source.url, err: message },
      'list refresh failed; the last good copy stays'
    )
    const empty = { entryTarget: target, entries: 0, lastSuccess: 0, lastChange: 0, bytes: 0, invalid: 0, skipped: 0 }
    const state: ListState = {
      ...(prev ?? empty),
      lastAttempt: started,
      nextDue: this.dueAfter(Math.min(this.options.settings.retry, source.interval ?? Infinity), started),
      errors: (prev?.errors ?? 0) + 1,
      consecutiveErrors: (prev?.consecutiveErrors ?? 0) + 1,
      lastError: message,
      host: this.host
    }
    try {
      await this.options.store.write((w) => w.putSubscriptionValue(stateKey(source.id), state))
    } catch (writeErr) {
      this.options.logger.warn({ source: source.id, err: (writeErr as Error).message }, 'list state not written')
    }
    return { status: 'failed', error: message }
  }

  /** Entries of sources that are no longer defined (a config source removed from the file). */
  private async removeOrphans(known: ReadonlySet<string>): Promise<void> {
    for (const id of statedIds(this.options.store)) {
      if (known.has(id) || this.closed) continue
      const claim = this.options.claim?.(`remove:${id}`)
      if (claim !== undefined && !(await claim.take(60_000).catch(() => false))) continue
      const removed = await removeSource(this.options.store, id)
      this.options.logger.info({ source: id, removed }, 'list source gone: its entries removed')
    }
  }
}
