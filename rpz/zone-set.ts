/**
 * The zones the rpz role serves, kept current with the store: on each generation it rebuilds the
 * global and user zones (small) and, only when a new category database was built, the category
 * zones (one scan of the table). Each zone keeps its journal, so a secondary one change behind gets
 * only that change.
 *
 * Subscribed lists (engine/lists) are in the zones too, since the DNS role enforces them: a
 * black/whitelist subscription's names in the global zone beside the operator's lists, a category
 * subscription's names in that category's zone (kept current from `sub:rev` by the same index the
 * policy uses).
 */
import type { Store } from '../engine/store/index.js'
import { RpzZone, type ZoneOptions } from '../engine/rpz-zones/index.js'
import { categoryEntries, listEntries, policySerial, userEntries, userLabel } from './policy-zones.js'
import { META_ACTIVE } from '../engine/catdb/index.js'
import { SubscriptionIndex } from '../engine/lists/index.js'

export interface ZoneSetSettings {
  suffix: string
  /** Categories served; empty: every category the table holds. */
  categories: readonly number[]
  users: boolean
  /** Action key of a blocked name (rpz/policy-zones.ts blockAction). */
  block: string
  /** Names the policy always passes (the built-in whitelist): passthru triggers in the global zone. */
  passed: readonly string[]
  zone: Omit<ZoneOptions, 'origin'>
}

export interface ZoneSummary {
  name: string
  serial: number
  triggers: number
  kind: 'global' | 'user' | 'category'
}

export class PolicyZoneSet {
  private readonly store: Store
  private readonly settings: ZoneSetSettings
  private readonly zones = new Map<string, { zone: RpzZone; kind: ZoneSummary['kind'] }>()
  private categoryVersion = -1
  private categoryZones = new Map<number, Map<string, string>>()
  private readonly subscriptions = new SubscriptionIndex()
  /** The category zones with the subscriptions' names, and the table version and revision they were made at. */
  private merged = { at: '', zones: new Map<number, Map<string, string>>() }

  constructor(store: Store, settings: ZoneSetSettings) {
    this.store = store
    this.settings = settings
    this.refresh()
  }

  get(name: string): RpzZone | undefined {
    return this.zones.get(name.toLowerCase())?.zone
  }

  /** Every zone in the order a consumer should list them (global, users, categories). */
  list(): ZoneSummary[] {
    return [...this.zones.entries()].map(([name, { zone, kind }]) => ({
      name,
      serial: zone.serial,
      triggers: zone.entries.size,
      kind
    }))
  }

  /** Reads the store and moves every zone to the current serial; returns the zones whose content changed. */
  refresh(): string[] {
    const serial = policySerial(this.store)
    const wanted = new Map<string, { entries: Map<string, string>; kind: ZoneSummary['kind'] }>()
    const s = this.settings
    this.subscriptions.refresh(this.store)
    const white = [...this.store.getList(null, 'white'), ...this.subscriptions.names('white')]
    const black = [...this.store.getList(null, 'black'), ...this.subscriptions.names('black')]
    const global = listEntries(white, black, s.block, s.passed)
    wanted.set(`global.${s.suffix}`, { entries: global, kind: 'global' })
    if (s.users) this.userZones(wanted)
    this.refreshCategories()
    for (const [c, entries] of [...this.mergedCategories()].sort((a, b) => a[0] - b[0]))
      wanted.set(`cat-${c}.${s.suffix}`, { entries, kind: 'category' })

    const changed: string[] = []
    for (const [name, { entries, kind }] of wanted) {
      const held = this.zones.get(name)
      if (held === undefined) {
        this.zones.set(name, { zone: new RpzZone({ ...s.zone, origin: name }, serial, entries), kind })
        changed.push(name)
      } else if (held.zone.update(serial, entries) > 0) changed.push(name)
    }
    for (const name of [...this.zones.keys()]) if (!wanted.has(name)) this.zones.delete(name)
    return changed
  }

  private userZones(wanted: Map<string, { entries: Map<string, string>; kind: ZoneSummary['kind'] }>): void {
    const s = this.settings
    for (const user of this.store.users()) {
      const entries = userEntries(
        user,
        this.store.getList(user.name, 'white'),
        this.store.getList(user.name, 'black'),
        s.block
      )
      wanted.set(`${userLabel(user.name)}.${s.suffix}`, { entries, kind: 'user' })
    }
  }

  private refreshCategories(): void {
    const active = this.store.getMeta(META_ACTIVE)
    const version = typeof active === 'number' ? active : 0
    if (version === this.categoryVersion) return
    const scan = categoryEntries(this.store, new Set(this.settings.categories), this.settings.block)
    this.categoryVersion = scan.version
    this.categoryZones = scan.zones
  }

  /** The category zones with the category subscriptions' names added; made again only when either moved. */
  private mergedCategories(): Map<number, Map<string, string>> {
    const at = `${this.categoryVersion}:${this.subscriptions.revision}`
    if (this.merged.at === at) return this.merged.zones
    const wanted = new Set(this.settings.categories)
    const zones = new Map(this.categoryZones)
    for (const [c, names] of this.subscriptions.categoryNames()) {
      if (wanted.size > 0 && !wanted.has(c)) continue
      // A copy: the scanned zone stays as the table has it, for the next merge.
      const zone = new Map(this.categoryZones.get(c))
      for (const name of names) {
        zone.set(name, this.settings.block)
        zone.set(`*.${name}`, this.settings.block)
      }
      zones.set(c, zone)
    }
    this.merged = { at, zones }
    return zones
  }
}
