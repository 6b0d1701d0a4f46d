/**
 * filterd's policy as RPZ triggers (RPZ out): which zones there are and what each holds, read from
 * the store. A list entry `example.com` blocks the name and every name under it (the policy's
 * suffix walk), so it becomes two triggers, `example.com` and `*.example.com`. Zone order matters
 * to a consumer (the first zone that matches wins, as the policy's steps do): the global zone
 * first, then the user zones, then the categories (docs/rpz.md).
 */
import type { Database } from 'lmdb'
import { decodeCats, META_ACTIVE } from '../engine/catdb/index.js'
import type { Store, UserRecord } from '../engine/store/index.js'
import { ALLOW_ONLY } from '../engine/policy/index.js'
import { parseCidr } from '../engine/net/index.js'
import {
  TYPE_A,
  TYPE_AAAA,
  actionKey,
  cnameAction,
  PASSTHRU,
  NXDOMAIN_TARGET,
  type ActionRecord,
  toSerial
} from '../engine/rpz-zones/index.js'
/** The action of a blocked name: a CNAME to the block host, else the block page's addresses, else NXDOMAIN. */
export function blockAction(blockCname: string, blockpageIps: readonly string[]): string {
  if (blockCname !== '') return cnameAction(blockCname.replace(/\.$/, ''))
  const records: ActionRecord[] = blockpageIps.map((ip) => [ip.includes(':') ? TYPE_AAAA : TYPE_A, ip])
  return records.length > 0 ? actionKey(records) : cnameAction(NXDOMAIN_TARGET)
}

export const PASS_ACTION = cnameAction(PASSTHRU)

/**
 * The SOA serial every zone carries: the policy generation, or with a shared Redis store the
 * shared sequence this host's replica has applied, so every host serves one serial for one content.
 */
export function policySerial(store: Store): number {
  const position = store.replicaPosition()
  return toSerial(position !== undefined ? position.seq : store.generation())
}

function addName(entries: Map<string, string>, name: string, action: string): void {
  entries.set(name, action)
  entries.set(`*.${name}`, action)
}

/** True when `name` or one of its parents is in `set`. */
function underAny(set: ReadonlySet<string>, name: string): boolean {
  for (let i = 0; ;) {
    if (set.has(name.slice(i))) return true
    const dot = name.indexOf('.', i)
    if (dot < 0) return false
    i = dot + 1
  }
}

/**
 * Black/whitelist triggers of one scope. The policy passes a whitelisted name (or one under it)
 * before it looks at the blacklist, while RPZ prefers the longer match: a blacklisted name under a
 * whitelisted one is left out, so the zone answers as the policy does. The allow-only entry `-`
 * is the apex wildcard `*`: every name not passed.
 */
export function listEntries(
  white: readonly string[],
  black: readonly string[],
  block: string,
  passed: readonly string[] = []
): Map<string, string> {
  const entries = new Map<string, string>()
  const whiteSet = new Set([...white.filter((w) => w !== ALLOW_ONLY), ...passed])
  for (const name of black) {
    if (name === ALLOW_ONLY) entries.set('*', block)
    else if (!underAny(whiteSet, name)) addName(entries, name, block)
  }
  for (const name of whiteSet) addName(entries, name, PASS_ACTION)
  return entries
}

/** The reverse-label owner of a CLIENT-IP trigger (draft-ietf-dnsop-dns-rpz 4.1.1): `32.4.3.2.1`. */
export function clientIpOwner(cidrText: string): string | undefined {
  const cidr = parseCidr(cidrText)
  if (cidr === undefined) return undefined
  const bytes = cidr.bytes
  if (bytes.length === 4) return `${cidr.prefix}.${Array.from(bytes).reverse().join('.')}.rpz-client-ip`
  const words: string[] = []
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16))
  // The longest run of zero words (two or more) is written `zz`, as `::` in text.
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8;) {
    let j = i
    while (j < 8 && words[j] === '0') j++
    if (j - i > bestLen) {
      best = i
      bestLen = j - i
    }
    i = j === i ? i + 1 : j
  }
  const parts = best < 0 ? words : [...words.slice(0, best), 'zz', ...words.slice(best + bestLen)]
  return `${cidr.prefix}.${parts.reverse().join('.')}.rpz-client-ip`
}

/** A user's zone: its lists, and CLIENT-IP passthru triggers while the user is disabled (the policy forwards). */
export function userEntries(
  user: UserRecord,
  white: readonly string[],
  black: readonly string[],
  block: string
): Map<string, string> {
  const entries = user.status === 'enabled' ? listEntries(white, black, block) : new Map<string, string>()
  if (user.status !== 'enabled') {
    for (const ip of user.ip) {
      const owner = clientIpOwner(ip.includes('/') ? ip : `${ip}/${ip.includes(':') ? 128 : 32}`)
      if (owner !== undefined) entries.set(owner, PASS_ACTION)
    }
  }
  return entries
}

/** A user name as one DNS label: lower-case letters, digits and `-` kept, anything else hex-escaped as `_xx`. */
export function userLabel(name: string): string {
  let out = ''
  for (const ch of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(ch)
    out += /[a-z0-9-]/.test(c) ? c : `_${ch.toString(16).padStart(2, '0')}`
  }
  return `user-${out}`.slice(0, 63)
}

/**
 * Every category zone's triggers in one scan of the active category table: category → entries.
 * `wanted` empty = every category met. Returns the table version scanned too (0: none built).
 */
export function categoryEntries(
  store: Store,
  wanted: ReadonlySet<number>,
  block: string
): { version: number; zones: Map<number, Map<string, string>> } {
  const zones = new Map<number, Map<string, string>>()
  for (const c of wanted) zones.set(c, new Map())
  const active = store.getMeta(META_ACTIVE)
  const version = typeof active === 'number' ? active : 0
  if (version === 0) return { version, zones }
  const table: Database<Buffer, string> = store.root.openDB<Buffer, string>({
    name: `domains.${version}`,
    encoding: 'binary'
  })
  for (const { key, value } of table.getRange({ snapshot: true })) {
    for (const c of decodeCats(value)) {
      if (wanted.size > 0 && !wanted.has(c)) continue
      let zone = zones.get(c)
      if (zone === undefined) zones.set(c, (zone = new Map<string, string>()))
      addName(zone, key, block)
    }
  }
  return { version, zones }
}
