/**
 * Where list subscriptions live in the policy store: every key under `sub:` in the `lists` table, so
 * they replicate through Redis like any list (engine/replica) and a write changes only the keys it
 * names.
 *
 *   sub:src:<id>            a source added through the API (ListSource; config sources live in the config)
 *   sub:state:<id>          its refresh state (ListState): validators, last success, counts, errors
 *   sub:e:<id>:<name>       one entry: the name's target (EntryTarget)
 *   sub:rev                 the revision of the entries and what its last write changed (RevRecord)
 *
 * One key per entry is what lets a refresh write only the difference, and `sub:rev` is what lets each
 * process's policy (engine/lists/policy-index.ts) apply that difference in memory too.
 */
import { SUBSCRIPTION_PREFIX, type Store } from '../store/index.js'
import type { ListFormat } from './parse.js'

/** What a source's entries do: the global blacklist or whitelist, or a category. */
export type ListTarget = 'blacklist' | 'whitelist' | 'category'
/** An entry's value: `black`, `white`, or the category number. */
export type EntryTarget = 'black' | 'white' | number

export const SOURCE_ID = /^[a-z0-9_-]{1,32}$/

export interface ListSource {
  id: string
  url: string
  format: ListFormat
  target: ListTarget
  /** The category, when `target` is `category`. */
  category?: number
  /** Seconds between refreshes; the config's `lists.interval` when absent. */
  interval?: number
  enabled: boolean
}

export interface ListState {
  /** The target its stored entries have (a changed target rewrites them). */
  entryTarget: EntryTarget
  entries: number
  /** ms since the epoch; 0 = never. */
  lastAttempt: number
  /** Last time the copy was confirmed: a 200 applied or a 304. */
  lastSuccess: number
  /** Last time the entries changed. */
  lastChange: number
  nextDue: number
  etag?: string
  lastModified?: string
  bytes: number
  invalid: number
  skipped: number
  errors: number
  consecutiveErrors: number
  lastError?: string
  /** The host that made the last attempt. */
  host?: string
}

/** One entry's change: name, old target, new target (null = absent). */
export type EntryChange = [name: string, from: EntryTarget | null, to: EntryTarget | null]

export interface RevRecord {
  rev: number
  /** What the write that made `rev` changed. */
  changes: EntryChange[]
}

export const REV_KEY = `${SUBSCRIPTION_PREFIX}rev`
export const ENTRY_PREFIX = `${SUBSCRIPTION_PREFIX}e:`
const SOURCE_PREFIX = `${SUBSCRIPTION_PREFIX}src:`
export const STATE_PREFIX = `${SUBSCRIPTION_PREFIX}state:`

export const sourceKey = (id: string): string => SOURCE_PREFIX + id
export const stateKey = (id: string): string => STATE_PREFIX + id
export const entryPrefix = (id: string): string => `${ENTRY_PREFIX}${id}:`

export function entryTargetOf(source: Pick<ListSource, 'target' | 'category'>): EntryTarget {
  if (source.target === 'blacklist') return 'black'
  if (source.target === 'whitelist') return 'white'
  return source.category ?? 0
}

/** The name an entry key holds (after `sub:e:<id>:`). */
export function entryName(key: string): string {
  return key.slice(key.indexOf(':', ENTRY_PREFIX.length) + 1)
}

export function storedSources(store: Store): ListSource[] {
  return [...store.subscriptionRange(SOURCE_PREFIX)].map((e) => e.value as ListSource)
}

export function storedSource(store: Store, id: string): ListSource | undefined {
  return store.getSubscriptionValue(sourceKey(id)) as ListSource | undefined
}

export function sourceState(store: Store, id: string): ListState | undefined {
  return store.getSubscriptionValue(stateKey(id)) as ListState | undefined
}

/** Every source id that has a state (config sources too), for cleaning up removed ones. */
export function statedIds(store: Store): string[] {
  return [...store.subscriptionRange(STATE_PREFIX)].map((e) => e.key.slice(STATE_PREFIX.length))
}

/** The source's current entries, name → target. */
export function currentEntries(store: Store, id: string): Map<string, EntryTarget> {
  const out = new Map<string, EntryTarget>()
  const prefix = entryPrefix(id)
  for (const { key, value } of store.subscriptionRange(prefix)) out.set(key.slice(prefix.length), value as EntryTarget)
  return out
}
