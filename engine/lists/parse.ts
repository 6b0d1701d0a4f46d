/**
 * The formats a subscribed list comes in (docs/lists.md): hosts files, plain domain lists, AdBlock
 * network rules (`||name^`) and the simple QNAME lines of an RPZ zone (`name CNAME .`). Each parser
 * turns a body into the set of keys it names (engine/names: lower case, punycode, no trailing dot);
 * an entry matches the name and its subdomains, as every list of filterd does.
 *
 * A line that cannot be read is counted (`invalid`), never fatal: the refresher refuses a copy only
 * when too many of its lines are invalid (an HTML error page served with 200, say). A line that is
 * well formed but means something filterd does not apply from a list (an AdBlock exception or a rule
 * with modifiers, an RPZ passthru or an RPZ record other than `CNAME .`) is `skipped`, not invalid.
 */
import { isIPv4, normalizeDomain } from '../names/index.js'
import { readHostsLine } from './hosts-line.js'

export const LIST_FORMATS = ['hosts', 'domains', 'adblock', 'rpz'] as const
export type ListFormat = (typeof LIST_FORMATS)[number]

export interface ParsedList {
  readonly entries: Set<string>
  /** Lines that held something other than a comment or white space. */
  readonly lines: number
  readonly invalid: number
  readonly skipped: number
}

/** A line's key, or what it was instead (numbers: never a key). */
const INVALID = 0
const SKIPPED = 1
const NONE = 2
type LineResult = string | typeof INVALID | typeof SKIPPED | typeof NONE

/** A key for `text` (a leading `*.` dropped: an entry covers its subdomains), or undefined. */
function keyOf(text: string): string | undefined {
  const name = normalizeDomain(text.startsWith('*.') ? text.slice(2) : text)
  // A single label or an address is never a list entry (a hosts line's own address, "com").
  if (name === undefined || !name.includes('.') || isIPv4(name)) return undefined
  return name
}

function withoutComment(line: string, marks: string): string {
  let end = line.length
  for (const m of marks) {
    const i = line.indexOf(m)
    if (i >= 0 && i < end) end = i
  }
  return line.slice(0, end).trim()
}

function domainsLine(raw: string): LineResult {
  const line = withoutComment(raw, '#')
  if (line === '') return NONE
  return keyOf(line) ?? INVALID
}

function hostsLine(raw: string, out: Set<string>): LineResult {
  const line = readHostsLine(raw)
  if (line.kind === 'empty') return NONE
  if (line.kind === 'invalid') return INVALID
  let any: LineResult = SKIPPED
  for (const name of line.names) {
    const key = keyOf(name)
    if (key === undefined) return INVALID
    out.add(key)
    any = key
  }
  return any
}

function adblockLine(raw: string): LineResult {
  const line = raw.trim()
  if (line === '' || line.startsWith('!') || line.startsWith('#') || line.startsWith('[')) return NONE
  const m = /^\|\|([^^$|/]+)\^(\|)?(\$important)?$/.exec(line)
  if (m !== null) return keyOf(m[1]!) ?? INVALID
  // Exceptions, modifiers, paths, cosmetic rules: AdBlock syntax a DNS filter does not apply.
  if (line.startsWith('@@') || line.includes('$') || line.includes('##') || line.startsWith('||')) return SKIPPED
  if (line.startsWith('/') || line.startsWith('|') || line.includes('/')) return SKIPPED
  // A bare name is a rule too (it matches anywhere in the URL); read it as the name.
  return keyOf(line) ?? INVALID
}

/** RPZ parsing state: the zone's origin, for owner names written in full. */
interface RpzState {
  origin: string
}

function rpzLine(raw: string, st: RpzState): LineResult {
  const line = withoutComment(raw, ';')
  if (line === '') return NONE
  const fields = line.split(/\s+/)
  if (fields[0]!.toUpperCase() === '$ORIGIN') {
    st.origin = (fields[1] ?? '').toLowerCase().replace(/\.$/, '')
    return NONE
  }
  // $TTL and $INCLUDE say nothing about entries; the apex's and continued records are not triggers.
  if (fields[0]!.startsWith('$')) return NONE
  if (/^\s/.test(raw) || fields[0] === '@') return SKIPPED
  let i = 1
  while (i < fields.length && (/^\d+$/.test(fields[i]!) || /^(IN|CH|HS)$/i.test(fields[i]!))) i++
  const type = (fields[i] ?? '').toUpperCase()
  const rdata = fields[i + 1]
  if (type === '') return INVALID
  if (type !== 'CNAME' || rdata !== '.') return SKIPPED
  let owner = fields[0]!.toLowerCase()
  if (owner.endsWith('.')) {
    owner = owner.slice(0, -1)
    if (st.origin === '' || !owner.endsWith('.' + st.origin)) return INVALID
    owner = owner.slice(0, -st.origin.length - 1)
  }
  return keyOf(owner) ?? INVALID
}

/** Parses `body` (UTF-8 text; CRLF or LF) in `format`. */
export function parseList(body: string, format: ListFormat): ParsedList {
  const entries = new Set<string>()
  const st: RpzState = { origin: '' }
  let lines = 0
  let invalid = 0
  let skipped = 0
  for (const raw of body.split('\n')) {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    let r: LineResult
    if (format === 'hosts') r = hostsLine(text, entries)
    else if (format === 'domains') r = domainsLine(text)
    else if (format === 'adblock') r = adblockLine(text)
    else r = rpzLine(text, st)
    if (r === NONE) continue
    lines++
    if (r === INVALID) invalid++
    else if (r === SKIPPED) skipped++
    else entries.add(r)
  }
  return { entries, lines, invalid, skipped }
}
