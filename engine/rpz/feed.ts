/**
 * An RPZ feed taken in (RPZ in): the zone's records, kept by owner so an IXFR applies in place, and
 * the triggers they compile to. QNAME triggers (exact and `*.` wildcard) and CLIENT-IP triggers are
 * enforced; NSDNAME, NSIP and response-IP triggers cannot be by a forwarder that never sees the
 * name servers or the answer, so they are counted and reported, never silently dropped.
 */
import { parseCidr, cidrContains, ipBytes, type Cidr } from '../net/ip.js'
import { TYPE_CNAME, TYPE_NS, TYPE_SOA } from './message.js'
import type { TextRecord } from './zonefile.js'

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

/** Records by owner (relative to the origin), each `type data`. */
export type FeedRecords = Map<string, string[]>

/** One IXFR step: the records it deletes and adds, from serial `from` to `to`. */
export interface FeedStep {
  from: number
  to: number
  deleted: TextRecord[]
  added: TextRecord[]
}

export class FeedError extends Error {
  readonly code = 'RPZ_FEED'
}

function relative(name: string, origin: string): string | undefined {
  if (name === origin) return '@'
  return name.endsWith('.' + origin) ? name.slice(0, -origin.length - 1) : undefined
}

function actionOf(records: readonly string[]): FeedAction {
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

/** A CLIENT-IP owner (`32.4.3.2.1`, `128.zz.1.db8.2001`) as a prefix. */
function clientIpCidr(owner: string): Cidr | undefined {
  const labels = owner.split('.')
  const bits = Number(labels.shift())
  if (labels.length === 4 && labels.every((l) => /^\d+$/.test(l)))
    return parseCidr(`${labels.reverse().join('.')}/${bits}`)
  const words = labels.reverse().map((l) => (l === 'zz' ? '' : l))
  const text = words.join(':').replace(/^:/, '::').replace(/:$/, '::')
  return parseCidr(`${text}/${bits}`)
}

export class FeedZone {
  readonly origin: string
  serial: number
  /** SOA timers of the feed (refresh, retry, expire) in seconds. */
  timers: { refresh: number; retry: number; expire: number }
  private records: FeedRecords = new Map()
  private exact = new Map<string, FeedAction>()
  private wildcard = new Map<string, FeedAction>()
  private clientIps: Array<{ cidr: Cidr; action: FeedAction }> = []
  counts: FeedCounts = { qname: 0, clientIp: 0, nsdname: 0, nsip: 0, responseIp: 0 }
  /** Records held (the SOA not counted). */
  recordCount = 0

  private constructor(origin: string, serial: number) {
    this.origin = origin
    this.serial = serial
    this.timers = { refresh: 3600, retry: 600, expire: 604800 }
  }

  /** A feed from a whole zone (a zone file or an AXFR): its SOA must be at the origin. */
  static fromRecords(origin: string, records: readonly TextRecord[]): FeedZone {
    const o = origin.toLowerCase().replace(/\.$/, '')
    const soa = records.find((r) => r.type === TYPE_SOA && r.name === o)
    if (soa === undefined) throw new FeedError(`no SOA at ${o}`)
    const zone = new FeedZone(o, 0)
    zone.setSoa(soa.data)
    for (const r of records) if (r.type !== TYPE_SOA) zone.add(r)
    zone.compile()
    return zone
  }

  private setSoa(data: string): void {
    const f = data.split(' ')
    this.serial = Number(f[2])
    this.timers = { refresh: Number(f[3]), retry: Number(f[4]), expire: Number(f[5]) }
  }

  private add(r: TextRecord): void {
    const owner = relative(r.name, this.origin)
    if (owner === undefined) throw new FeedError(`${r.name} is outside the zone ${this.origin}`)
    const value = `${r.type} ${r.data}`
    const list = this.records.get(owner)
    if (list === undefined) this.records.set(owner, [value])
    else if (!list.includes(value)) list.push(value)
  }

  /**
   * Applies IXFR steps, all or nothing: each step must start at the serial the one before ended at
   * (the first at ours), and every deleted record must exist; else FeedError and nothing changed.
   */
  applySteps(steps: readonly FeedStep[]): void {
    let serial = this.serial
    const staged = new Map<string, string[] | undefined>()
    const current = (owner: string): string[] => staged.get(owner) ?? this.records.get(owner) ?? []
    for (const step of steps) {
      if (step.from !== serial)
        throw new FeedError(`IXFR gap: a step from serial ${step.from}, the feed is at ${serial}`)
      for (const r of step.deleted) {
        const owner = relative(r.name, this.origin)
        const value = `${r.type} ${r.data}`
        const list = owner === undefined ? [] : current(owner)
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
    const previous = new Map<string, string[] | undefined>()
    const after = new Map<string, string[] | undefined>()
    for (const [owner, list] of staged) {
      previous.set(owner, this.records.get(owner))
      if (list === undefined || list.length === 0) this.records.delete(owner)
      else this.records.set(owner, list)
      after.set(owner, this.records.get(owner))
    }
    this.serial = serial
    this.recompile(previous, after)
  }

  /**
   * The triggers of the changed owners only (an IXFR of one record costs one record, not a pass over
   * the feed); a changed CLIENT-IP trigger rebuilds all (its list is kept sorted by prefix).
   */
  private recompile(
    previous: ReadonlyMap<string, readonly string[] | undefined>,
    after: ReadonlyMap<string, readonly string[] | undefined>
  ): void {
    for (const owner of after.keys()) if (owner.endsWith('.rpz-client-ip')) return this.compile()
    for (const [owner, list] of previous) this.account(owner, list, -1)
    for (const [owner, list] of after) this.account(owner, list, 1)
  }

  /** Adds (1) or takes out (-1) one owner's records and trigger, as compile() counts them. */
  private account(owner: string, list: readonly string[] | undefined, sign: 1 | -1): void {
    if (list === undefined) return
    this.recordCount += sign * list.length
    if (owner === '@') return
    const triggers = list.filter((v) => !v.startsWith(`${TYPE_NS} `))
    if (triggers.length === 0) return
    const c = this.counts
    if (owner.endsWith('.rpz-nsdname')) c.nsdname += sign
    else if (owner.endsWith('.rpz-nsip')) c.nsip += sign
    else if (owner.endsWith('.rpz-ip')) c.responseIp += sign
    else {
      c.qname += sign
      const wild = owner === '*' || owner.startsWith('*.')
      const map = wild ? this.wildcard : this.exact
      const key = owner === '*' ? '' : wild ? owner.slice(2) : owner
      if (sign < 0) map.delete(key)
      else map.set(key, actionOf(triggers))
    }
  }

  /** The triggers of the records (apex records and the SOA are not triggers). */
  private compile(): void {
    const exact = new Map<string, FeedAction>()
    const wildcard = new Map<string, FeedAction>()
    const clientIps: Array<{ cidr: Cidr; action: FeedAction }> = []
    const counts: FeedCounts = { qname: 0, clientIp: 0, nsdname: 0, nsip: 0, responseIp: 0 }
    let recordCount = 0
    for (const [owner, list] of this.records) {
      recordCount += list.length
      if (owner === '@') continue
      const triggers = list.filter((v) => !v.startsWith(`${TYPE_NS} `))
      if (triggers.length === 0) continue
      if (owner.endsWith('.rpz-nsdname')) counts.nsdname++
      else if (owner.endsWith('.rpz-nsip')) counts.nsip++
      else if (owner.endsWith('.rpz-ip')) counts.responseIp++
      else if (owner.endsWith('.rpz-client-ip')) {
        const cidr = clientIpCidr(owner.slice(0, -'.rpz-client-ip'.length))
        if (cidr === undefined) throw new FeedError(`bad CLIENT-IP trigger ${owner}`)
        clientIps.push({ cidr, action: actionOf(triggers) })
        counts.clientIp++
      } else {
        counts.qname++
        if (owner === '*') wildcard.set('', actionOf(triggers))
        else if (owner.startsWith('*.')) wildcard.set(owner.slice(2), actionOf(triggers))
        else exact.set(owner, actionOf(triggers))
      }
    }
    // The longest prefix first: RPZ prefers the most specific CLIENT-IP trigger.
    clientIps.sort((a, b) => b.cidr.prefix - a.cidr.prefix)
    this.exact = exact
    this.wildcard = wildcard
    this.clientIps = clientIps
    this.counts = counts
    this.recordCount = recordCount
  }

  /** The feed's action for `name` asked by `client` (CLIENT-IP first, then QNAME), or undefined. */
  match(name: string, client?: string): { action: FeedAction; trigger: string } | undefined {
    if (client !== undefined && this.clientIps.length > 0) {
      const bytes = ipBytes(client)
      if (bytes !== undefined)
        for (const c of this.clientIps)
          if (cidrContains(c.cidr, bytes)) return { action: c.action, trigger: `client-ip ${c.cidr.text}` }
    }
    const hit = this.exact.get(name)
    if (hit !== undefined) return { action: hit, trigger: name }
    for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) {
      const w = this.wildcard.get(name.slice(i + 1))
      if (w !== undefined) return { action: w, trigger: `*.${name.slice(i + 1)}` }
    }
    const all = this.wildcard.get('')
    return all === undefined ? undefined : { action: all, trigger: '*' }
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
