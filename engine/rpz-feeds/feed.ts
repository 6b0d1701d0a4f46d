/**
 * An RPZ feed taken in (RPZ in): the triggers of the zone's records, kept compact (a packed table of
 * owner names and action codes, trigger-table.ts) and patched in place by IXFR. QNAME triggers (exact and `*.` wildcard) and CLIENT-IP triggers are
 * enforced; NSDNAME, NSIP and response-IP triggers cannot be by a forwarder that never sees the
 * name servers or the answer, so they are counted and reported, never silently dropped.
 */
import { EngineError } from '../errors.js'
import { parseCidr, cidrContains, ipBytes, type Cidr } from '../net/index.js'
import { TYPE_CNAME, TYPE_NS, TYPE_SOA } from '../rpz-zones/index.js'
import type { TextRecord } from '../rpz-zones/index.js'
import { isLatin1, MAX_KEY, NO_CODE, TriggerTable } from './trigger-table.js'

export type FeedAction =
  | { kind: 'nxdomain' | 'nodata' | 'passthru' | 'drop' | 'tcp-only' }
  | { kind: 'local'; records: ReadonlyArray<readonly [type: number, data: string]> }

export interface FeedCounts {
  qname: number
  clientIp: number
  /** Triggers read but not enforced, by kind. */
  nsdname: number
  nsip: number
  responseIp: number
}

/** One IXFR step: the records it deletes and adds, from serial `from` to `to`. */
export interface FeedStep {
  from: number
  to: number
  deleted: TextRecord[]
  added: TextRecord[]
}

export class FeedError extends EngineError {
  constructor(message: string, options?: ErrorOptions) {
    super('ENGINE_RPZ_FEED', message, options)
    this.name = 'FeedError'
  }
}

function relative(name: string, origin: string): string | undefined {
  if (name === origin) return '@'
  return name.endsWith('.' + origin) ? name.slice(0, -origin.length - 1) : undefined
}

/** The action of one owner's trigger records (`type data`). */
export function actionOf(records: readonly string[]): FeedAction {
  const parsed = records.map((r) => {
    const sp = r.indexOf(' ')
    return [Number(r.slice(0, sp)), r.slice(sp + 1)] as const
  })
  const first = parsed[0]
  if (parsed.length === 1 && first !== undefined && first[0] === TYPE_CNAME) {
    const target = first[1]
    if (target === '') return { kind: 'nxdomain' }
    if (target === '*') return { kind: 'nodata' }
    if (target === 'rpz-passthru') return { kind: 'passthru' }
    if (target === 'rpz-drop') return { kind: 'drop' }
    if (target === 'rpz-tcp-only') return { kind: 'tcp-only' }
  }
  return { kind: 'local', records: parsed }
}

const CLIENT_IP_SUFFIX = '.rpz-client-ip'

/** Whether `owner` (relative) is a CLIENT-IP trigger's. */
export function isClientIpOwner(owner: string): boolean {
  return owner.endsWith(CLIENT_IP_SUFFIX)
}

/** A CLIENT-IP owner (`32.4.3.2.1.rpz-client-ip`, `128.zz.1.db8.2001.rpz-client-ip`) as a prefix. */
export function clientIpCidr(owner: string): Cidr | undefined {
  const labels = owner.slice(0, -CLIENT_IP_SUFFIX.length).split('.')
  const bits = Number(labels.shift())
  if (labels.length === 4 && labels.every((l) => /^\d+$/.test(l)))
    return parseCidr(`${labels.reverse().join('.')}/${bits}`)
  const words = labels.reverse().map((l) => (l === 'zz' ? '' : l))
  const text = words.join(':').replace(/^:/, '::').replace(/:$/, '::')
  return parseCidr(`${text}/${bits}`)
}

/** The CNAME targets of RPZ's special actions, by action code (a packed trigger's value). */
const SPECIAL_TARGETS = ['', '*', 'rpz-passthru', 'rpz-drop', 'rpz-tcp-only'] as const
const SPECIAL_ACTIONS: readonly FeedAction[] = Object.freeze([
  Object.freeze({ kind: 'nxdomain' as const }),
  Object.freeze({ kind: 'nodata' as const }),
  Object.freeze({ kind: 'passthru' as const }),
  Object.freeze({ kind: 'drop' as const }),
  Object.freeze({ kind: 'tcp-only' as const })
])
/** The code of an owner whose records are not one record of a known value: its action is in `others`. */
const OTHER = SPECIAL_TARGETS.length
/** Codes from here on are single records other than the special CNAMEs (a walled garden's CNAME, an A), by value. */
const FIRST_VALUE = OTHER + 1
/** The largest code a packed slot holds (trigger-table.ts). */
const MAX_CODE = (1 << 20) - 2
const NO_RECORDS: readonly string[] = Object.freeze([])

/** The action code of one record text (`type data`) when it is a special CNAME, else -1. */
function specialCode(value: string): number {
  if (!value.startsWith(`${TYPE_CNAME} `)) return -1
  return SPECIAL_TARGETS.indexOf(value.slice(2) as (typeof SPECIAL_TARGETS)[number])
}

/** Where an owner's QNAME trigger sits in the table: its key and whether it is a wildcard; undefined when not a QNAME owner. */
function qnameKey(owner: string): { key: string; wild: boolean } | undefined {
  if (owner === '@' || /\.rpz-(client-ip|nsdname|nsip|ip)$/.test(owner)) return undefined
  if (owner === '*') return { key: '', wild: true }
  if (owner.startsWith('*.')) return { key: owner.slice(2), wild: true }
  return { key: owner, wild: false }
}

/** Whether `owner` (relative) is a QNAME trigger's: not the apex, CLIENT-IP or the kinds not enforced. */
export function isTrigger(owner: string): boolean {
  return qnameKey(owner) !== undefined
}

/**
 * One feed's records and the triggers they compile to, in compact form: a QNAME owner with one record
 * (nearly every owner of a large feed: a special CNAME, or one walled-garden CNAME or address shared by
 * many names) is only its packed trigger and a code (trigger-table.ts; a value other than the special
 * CNAMEs is kept once, by code); the other owners (the apex, several records at one name, CLIENT-IP and
 * the unenforced kinds) keep their records as text in `others`. Either way each owner's records can be read back, which is
 * what an IXFR needs to check and apply a deletion.
 */
export class FeedZone {
  readonly origin: string
  serial: number
  /** SOA timers of the feed (refresh, retry, expire) in seconds. */
  timers: { refresh: number; retry: number; expire: number }
  private readonly table = new TriggerTable()
  /** Owners not packed as one record: their records (`type data`). */
  private readonly others = new Map<string, readonly string[]>()
  /** The action of each QNAME owner in `others` that has triggers (one object per owner, kept while it lasts). */
  private readonly otherActions = new Map<string, FeedAction>()
  /** Single-record values shared by many owners (`5 garden.example`), their action, by code - FIRST_VALUE. */
  private readonly values: string[] = []
  private readonly valueActions: FeedAction[] = []
  private readonly valueCodes = new Map<string, number>()
  private clientIps: Array<{ cidr: Cidr; action: FeedAction }> = []
  counts: FeedCounts = { qname: 0, clientIp: 0, nsdname: 0, nsip: 0, responseIp: 0 }
  /** Records held (the SOA not counted). */
  recordCount = 0

  /** An empty feed at `serial`; FeedBuilder fills it. */
  constructor(origin: string, serial: number) {
    this.origin = origin
    this.serial = serial
    this.timers = { refresh: 3600, retry: 600, expire: 604800 }
  }

  /** A feed from a whole zone (a zone file or an AXFR) held as records: its SOA must be at the origin. */
  static fromRecords(origin: string, records: readonly TextRecord[]): FeedZone {
    const b = new FeedBuilder(origin)
    for (const r of records) b.add(r)
    return b.finish()
  }

  /** Gives back the packed table's spare room (once the zone is built). */
  trim(): void {
    this.table.trim()
  }

  /** Bytes of the packed triggers (the benchmark's accounting). */
  get packedBytes(): number {
    return this.table.bytes
  }

  /** The records of `owner` (relative), as text. */
  recordsOf(owner: string): readonly string[] {
    const other = this.others.get(owner)
    if (other !== undefined) return other
    const q = qnameKey(owner)
    if (q === undefined) return NO_RECORDS
    const code = this.table.get(q.key, 0, q.wild)
    if (code < 0 || code === OTHER) return NO_RECORDS
    return [code < OTHER ? `${TYPE_CNAME} ${SPECIAL_TARGETS[code]}` : this.values[code - FIRST_VALUE]!]
  }

  /** Every owner and its records (`type data`), in no particular order (the store's copy is written from it). */
  *owners(): Generator<[owner: string, records: readonly string[]]> {
    for (const [owner, records] of this.others) yield [owner, records]
    for (const { key, wild, code } of this.table.entries()) {
      if (code === OTHER) continue // in `others`
      const owner = wild ? (key === '' ? '*' : `*.${key}`) : key
      yield [owner, [code < OTHER ? `${TYPE_CNAME} ${SPECIAL_TARGETS[code]}` : this.values[code - FIRST_VALUE]!]]
    }
  }

  /**
   * The owners kept as text (the apex, several records at one name, CLIENT-IP and the kinds not
   * enforced): every CLIENT-IP owner is among them, so its triggers are found without a walk of the
   * packed table's millions of names.
   */
  textOwners(): IterableIterator<[owner: string, records: readonly string[]]> {
    return this.others.entries()
  }

  /** The packed code of one record's value (a trigger alone at its owner), or -1 when it must stay as text. */
  private codeOf(value: string): number {
    const special = specialCode(value)
    if (special >= 0) return special
    if (value.startsWith(`${TYPE_NS} `)) return -1
    let code = this.valueCodes.get(value)
    if (code === undefined) {
      if (FIRST_VALUE + this.values.length > MAX_CODE) return -1
      code = FIRST_VALUE + this.values.length
      this.values.push(value)
      this.valueActions.push(actionOf([value]))
      this.valueCodes.set(value, code)
    }
    return code
  }

  /**
   * Adds one record while the zone is built (FeedBuilder): a new QNAME owner's first record goes straight
   * into the table; anything else goes through `setOwner`.
   */
  addRecord(owner: string, value: string): void {
    const q = qnameKey(owner)
    const code = q === undefined ? -1 : this.codeOf(value)
    if (q !== undefined && code >= 0 && this.placeable(q.key) && !this.others.has(owner)) {
      const had = this.table.get(q.key, 0, q.wild)
      if (had === code) return // the same record again
      if (had === NO_CODE) {
        this.table.set(q.key, q.wild, code)
        this.recordCount++
        this.counts.qname++
        return
      }
    }
    const list = this.recordsOf(owner)
    if (!list.includes(value)) this.replaceOwner(owner, [...list, value])
  }

  /** `owner`'s records replaced by `list` (empty: the owner is gone), counts and triggers kept current. */
  private replaceOwner(owner: string, list: readonly string[]): void {
    this.account(owner, this.recordsOf(owner), -1)
    this.setOwner(owner, list)
    this.account(owner, list, 1)
  }

  private placeable(key: string): boolean {
    return key.length <= MAX_KEY && isLatin1(key)
  }

  private setOwner(owner: string, list: readonly string[]): void {
    const q = qnameKey(owner)
    this.others.delete(owner)
    this.otherActions.delete(owner)
    if (q !== undefined) this.table.delete(q.key, q.wild)
    if (list.length === 0) return
    const code = list.length === 1 && q !== undefined ? this.codeOf(list[0]!) : -1
    if (q !== undefined && code >= 0 && this.placeable(q.key)) {
      this.table.set(q.key, q.wild, code)
      return
    }
    this.others.set(owner, list)
    const triggers = list.filter((v) => !v.startsWith(`${TYPE_NS} `))
    // A name no wire query can spell (a character above U+00FF) is kept and counted, never matched.
    if (q === undefined || triggers.length === 0 || !this.placeable(q.key)) return
    this.table.set(q.key, q.wild, OTHER)
    this.otherActions.set(owner, actionOf(triggers))
  }

  /** The SOA's serial and timers (the first SOA of a zone, or the last step of an IXFR). */
  setSoa(data: string): void {
    const f = data.split(' ')
    this.serial = Number(f[2])
    this.timers = { refresh: Number(f[3]), retry: Number(f[4]), expire: Number(f[5]) }
  }

  /**
   * Applies IXFR steps, all or nothing: each step must start at the serial the one before ended at
   * (the first at ours), and every deleted record must exist; else FeedError and nothing changed.
   * The changes are staged by owner first and then applied in one synchronous pass, so no query
   * sees a step half applied; returns the owners changed, with their records now. `maxRecords` bounds the zone the steps leave (the SOA not counted), not
   * the steps: an IXFR that replaces every name of a full zone is as good as an AXFR of it.
   */
  applySteps(steps: readonly FeedStep[], maxRecords = Infinity): ReadonlyMap<string, readonly string[]> {
    let serial = this.serial
    const staged = new Map<string, readonly string[]>()
    const current = (owner: string): readonly string[] => staged.get(owner) ?? this.recordsOf(owner)
    for (const step of steps) {
      if (step.from !== serial)
        throw new FeedError(`IXFR gap: a step from serial ${step.from}, the feed is at ${serial}`)
      for (const r of step.deleted) {
        const owner = relative(r.name, this.origin)
        const value = `${r.type} ${r.data}`
        const list = owner === undefined ? NO_RECORDS : current(owner)
        if (owner === undefined || !list.includes(value))
          throw new FeedError(`IXFR deletes a record the feed does not hold: ${r.name} ${value}`)
        staged.set(
          owner,
          list.filter((v) => v !== value)
        )
      }
      for (const r of step.added) {
        const owner = relative(r.name, this.origin)
        if (owner === undefined) throw new FeedError(`${r.name} is outside the zone ${this.origin}`)
        const list = current(owner)
        const value = `${r.type} ${r.data}`
        staged.set(owner, list.includes(value) ? list : [...list, value])
      }
      serial = step.to
    }
    for (const [owner, list] of staged)
      if (owner.endsWith('.rpz-client-ip') && list.length > 0 && clientIpCidr(owner) === undefined)
        throw new FeedError(`bad CLIENT-IP trigger ${owner}`)
    let records = this.recordCount
    for (const [owner, list] of staged) records += list.length - this.recordsOf(owner).length
    if (records > maxRecords)
      throw new FeedError(
        `IXFR to serial ${serial}: ${records} records, more than ${maxRecords} (rpz-feeds.max-records)`
      )
    let clientIp = false
    for (const [owner, list] of staged) {
      this.replaceOwner(owner, list)
      if (owner.endsWith('.rpz-client-ip')) clientIp = true
    }
    if (clientIp) this.compileClientIps()
    this.serial = serial
    return staged
  }

  /** Adds (1) or takes out (-1) one owner's records in the counts. */
  private account(owner: string, list: readonly string[], sign: 1 | -1): void {
    if (list.length === 0) return
    this.recordCount += sign * list.length
    if (owner === '@') return
    if (!list.some((v) => !v.startsWith(`${TYPE_NS} `))) return
    const c = this.counts
    if (owner.endsWith('.rpz-nsdname')) c.nsdname += sign
    else if (owner.endsWith('.rpz-nsip')) c.nsip += sign
    else if (owner.endsWith('.rpz-ip')) c.responseIp += sign
    else if (owner.endsWith('.rpz-client-ip')) c.clientIp += sign
    else c.qname += sign
  }

  /** The CLIENT-IP triggers, longest prefix first (RPZ prefers the most specific); a bad one throws. */
  compileClientIps(): void {
    const clientIps: Array<{ cidr: Cidr; action: FeedAction }> = []
    for (const [owner, list] of this.others) {
      if (!owner.endsWith('.rpz-client-ip')) continue
      const triggers = list.filter((v) => !v.startsWith(`${TYPE_NS} `))
      if (triggers.length === 0) continue
      const cidr = clientIpCidr(owner)
      if (cidr === undefined) throw new FeedError(`bad CLIENT-IP trigger ${owner}`)
      clientIps.push({ cidr, action: actionOf(triggers) })
    }
    clientIps.sort((a, b) => b.cidr.prefix - a.cidr.prefix)
    this.clientIps = clientIps
  }

  /** The action a packed code stands for (`owner` names the entry when the code is OTHER). */
  private actionFor(code: number, owner: string): FeedAction | undefined {
    if (code === OTHER) return this.otherActions.get(owner)
    return code < OTHER ? SPECIAL_ACTIONS[code] : this.valueActions[code - FIRST_VALUE]
  }

  /** The feed's action for `name` asked by `client` (CLIENT-IP first, then QNAME), or undefined. */
  match(name: string, client?: string): { action: FeedAction; trigger: string } | undefined {
    if (client !== undefined && this.clientIps.length > 0) {
      const bytes = ipBytes(client)
      if (bytes !== undefined)
        for (const c of this.clientIps)
          if (cidrContains(c.cidr, bytes)) return { action: c.action, trigger: `client-ip ${c.cidr.text}` }
    }
    const t = this.table
    if (t.count === 0) return undefined
    let code = t.get(name, 0, false)
    if (code >= 0) {
      const action = this.actionFor(code, name)
      return action === undefined ? undefined : { action, trigger: name }
    }
    // The most specific wildcard first: `*.b.c` before `*.c` before `*`.
    for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) {
      code = t.get(name, i + 1, true)
      if (code < 0) continue
      const trigger = `*.${name.slice(i + 1)}`
      const action = this.actionFor(code, trigger)
      return action === undefined ? undefined : { action, trigger }
    }
    code = t.get(name, name.length, true)
    const action = code < 0 ? undefined : this.actionFor(code, '*')
    return action === undefined ? undefined : { action, trigger: '*' }
  }
}

/**
 * Builds a feed record by record, as a zone file is read or an AXFR arrives, so the records are
 * never held as objects: each goes into the feed's compact form at once. The first SOA at the origin
 * gives the serial and timers; later SOAs (an AXFR's closing one) are ignored.
 */
export class FeedBuilder {
  private readonly zone: FeedZone
  private soa = false
  /** Records taken (besides the SOA). */
  records = 0

  constructor(origin: string) {
    this.zone = new FeedZone(origin.toLowerCase().replace(/\.$/, ''), 0)
  }

  add(r: TextRecord): void {
    const z = this.zone
    if (r.type === TYPE_SOA) {
      if (!this.soa && r.name === z.origin) {
        z.setSoa(r.data)
        this.soa = true
      }
      return
    }
    const owner = relative(r.name, z.origin)
    if (owner === undefined) throw new FeedError(`${r.name} is outside the zone ${z.origin}`)
    this.records++
    z.addRecord(owner, `${r.type} ${r.data}`)
  }

  /** The finished feed; FeedError without an SOA at the origin or with a bad CLIENT-IP trigger. */
  finish(): FeedZone {
    if (!this.soa) throw new FeedError(`no SOA at ${this.zone.origin}`)
    this.zone.compileClientIps()
    this.zone.trim()
    return this.zone
  }
}

/**
 * Several feeds in order: the first zone that matches wins (draft-ietf-dnsop-dns-rpz 5.1), whatever a
 * later zone says.
 */
export function matchFeeds(
  feeds: readonly FeedZone[],
  name: string,
  client?: string
): { zone: string; action: FeedAction; trigger: string } | undefined {
  for (const f of feeds) {
    const m = f.match(name, client)
    if (m !== undefined) return { zone: f.origin, ...m }
  }
  return undefined
}
