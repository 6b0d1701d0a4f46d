/**
 * An RPZ zone as filterd holds it: an origin, an SOA, and its triggers, each an owner name relative
 * to the origin (`example.com`, `*.example.com`, `32.1.0.0.10.rpz-client-ip`) mapped to an action
 * key (`actionKey`): one string per distinct action, so a million names that all point at the block
 * page share one value. A journal of changes (owner: old action, new action) lets the zone answer
 * IXFR from any serial it has seen since it was built; older serials get an AXFR.
 */
import { serialCompare } from './serial.js'
import { rdataFromText, soaRdata, type Soa } from './rdata.js'
import { CLASS_IN, TYPE_A, TYPE_AAAA, TYPE_CNAME, TYPE_NS, TYPE_SOA, TYPE_TXT, type WireRecord } from './message.js'

/** One record of an action: its type and its RDATA in presentation form. */
export type ActionRecord = readonly [type: number, data: string]

/** RPZ's special CNAME targets (draft-ietf-dnsop-dns-rpz 5). */
export const PASSTHRU = 'rpz-passthru'
export const NXDOMAIN_TARGET = ''

/** The action key of a list of records (`type data` joined by `|`; sorted, so equal actions have equal keys). */
export function actionKey(records: readonly ActionRecord[]): string {
  return records
    .map(([t, d]) => `${t} ${d}`)
    .sort()
    .join('|')
}

export function cnameAction(target: string): string {
  return actionKey([[TYPE_CNAME, target]])
}

export function actionRecords(key: string): ActionRecord[] {
  return key.split('|').map((part) => {
    const sp = part.indexOf(' ')
    return [Number(part.slice(0, sp)), part.slice(sp + 1)] as const
  })
}

const RECORD_TYPES = new Set([TYPE_A, TYPE_AAAA, TYPE_CNAME, TYPE_TXT])

/** Changes between two states: owner → [action before, action after] (undefined = absent). */
export type ZoneDiff = Map<string, [before: string | undefined, after: string | undefined]>

export function diffEntries(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): ZoneDiff {
  const diff: ZoneDiff = new Map()
  for (const [owner, action] of before) {
    const now = after.get(owner)
    if (now !== action) diff.set(owner, [action, now])
  }
  for (const [owner, action] of after) if (!before.has(owner)) diff.set(owner, [undefined, action])
  return diff
}

/** `a` then `b` as one diff (an owner changed back drops out). */
function composeDiffs(a: ZoneDiff, b: ZoneDiff): ZoneDiff {
  const out: ZoneDiff = new Map(a)
  for (const [owner, [before, after]] of b) {
    const first = out.get(owner)
    const from = first === undefined ? before : first[0]
    if (from === after) out.delete(owner)
    else out.set(owner, [from, after])
  }
  return out
}

interface JournalEntry {
  /** The serial at which this change took effect. */
  serial: number
  diff: ZoneDiff
}

export interface ZoneOptions {
  origin: string
  /** SOA fields other than the serial. */
  soa: Omit<Soa, 'serial'>
  /** TTL of the trigger records. */
  ttl: number
  /** Owners the journal keeps, summed over its changes, before it drops the oldest change. */
  journalOwners?: number
}

export class RpzZone {
  readonly origin: string
  private readonly soaFields: Omit<Soa, 'serial'>
  readonly ttl: number
  private entriesMap: Map<string, string> = new Map()
  private currentSerial: number
  /** The oldest serial whose content the zone still knows (IXFR reaches back to it). */
  private since: number
  private journal: JournalEntry[] = []
  private journalSize = 0
  private readonly journalOwners: number
  private readonly rdataCache = new Map<string, WireRecord[]>()

  constructor(options: ZoneOptions, serial: number, entries: Map<string, string>) {
    this.origin = options.origin.toLowerCase().replace(/\.$/, '')
    this.soaFields = options.soa
    this.ttl = options.ttl
    this.journalOwners = options.journalOwners ?? 1_000_000
    this.currentSerial = serial
    this.since = serial
    this.entriesMap = entries
  }

  get serial(): number {
    return this.currentSerial
  }

  get entries(): ReadonlyMap<string, string> {
    return this.entriesMap
  }

  soa(serial = this.currentSerial): Soa {
    return { ...this.soaFields, serial }
  }

  soaRecord(serial = this.currentSerial): WireRecord {
    return {
      name: this.origin,
      type: TYPE_SOA,
      class: CLASS_IN,
      ttl: this.soaFields.minimum,
      rdata: soaRdata(this.soa(serial))
    }
  }

  /** The apex records besides the SOA: one NS (a zone must have one; RPZ consumers ignore it). */
  apexRecords(): WireRecord[] {
    return [
      {
        name: this.origin,
        type: TYPE_NS,
        class: CLASS_IN,
        ttl: this.soaFields.minimum,
        rdata: rdataFromText(TYPE_NS, this.soaFields.mname)
      }
    ]
  }

  /** The records of one trigger. */
  records(owner: string, action: string): WireRecord[] {
    let rdatas = this.rdataCache.get(action)
    if (rdatas === undefined) {
      rdatas = actionRecords(action).map(([type, data]) => {
        if (!RECORD_TYPES.has(type)) throw new Error(`record type ${type} not allowed in an RPZ action`)
        return { name: '', type, class: CLASS_IN, ttl: this.ttl, rdata: rdataFromText(type, data) }
      })
      if (this.rdataCache.size > 10_000) this.rdataCache.clear()
      this.rdataCache.set(action, rdatas)
    }
    const name = `${owner}.${this.origin}`
    return rdatas.map((r) => ({ ...r, name }))
  }

  /**
   * Moves the zone to `serial` with `entries` (the caller's new map: the zone keeps it). Returns the
   * number of owners that changed; 0 still moves the serial (the content at the new serial is known).
   */
  update(serial: number, entries: Map<string, string>): number {
    const diff = diffEntries(this.entriesMap, entries)
    this.entriesMap = entries
    this.currentSerial = serial
    if (diff.size === 0) return 0
    this.journal.push({ serial, diff })
    this.journalSize += diff.size
    while (this.journalSize > this.journalOwners && this.journal.length > 0) {
      const dropped = this.journal.shift()!
      this.journalSize -= dropped.diff.size
      this.since = dropped.serial
    }
    return diff.size
  }

  /**
   * The changes from the client's `serial` to the current one, or undefined when the zone cannot
   * know them (older than the journal reaches, newer than ours, or unrelated): answer with AXFR.
   */
  changesSince(serial: number): ZoneDiff | undefined {
    if (serialCompare(serial, this.since) === -1 || Number.isNaN(serialCompare(serial, this.since))) return undefined
    const vsCurrent = serialCompare(serial, this.currentSerial)
    if (vsCurrent !== -1 && vsCurrent !== 0) return undefined
    let out: ZoneDiff = new Map()
    for (const j of this.journal) if (serialCompare(j.serial, serial) === 1) out = composeDiffs(out, j.diff)
    return out
  }
}
