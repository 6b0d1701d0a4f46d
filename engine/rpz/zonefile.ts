/**
 * A master file (RFC 1035 5) as RPZ feeds ship it, read into records: `$ORIGIN`, `$TTL`, `@`,
 * relative names, an owner carried over from the line before, comments, and parentheses over
 * several lines (the SOA). Types other than SOA, NS, CNAME, A, AAAA and TXT are kept as their text.
 * Any line it cannot read throws with its line number: a malformed feed is refused whole.
 */
import { TYPE_A, TYPE_AAAA, TYPE_CNAME, TYPE_NS, TYPE_SOA, TYPE_TXT } from './message.js'

export interface TextRecord {
  /** Absolute, lower case, no trailing dot. */
  name: string
  type: number
  ttl: number
  /** RDATA as text; names in it absolute without the trailing dot ('' = the root). */
  data: string
}

const TYPES: Readonly<Record<string, number>> = {
  A: TYPE_A,
  NS: TYPE_NS,
  CNAME: TYPE_CNAME,
  SOA: TYPE_SOA,
  TXT: TYPE_TXT,
  AAAA: TYPE_AAAA
}
const NAME_TYPES = new Set([TYPE_CNAME, TYPE_NS])

export class ZoneFileError extends Error {
  readonly code = 'RPZ_ZONE_FILE'
}

function absolute(name: string, origin: string): string {
  if (name === '@') return origin
  if (name.endsWith('.')) return name.slice(0, -1).toLowerCase()
  return (origin === '' ? name : `${name}.${origin}`).toLowerCase()
}

/** Logical lines: comments dropped, parenthesised continuations joined, with the first line's number. */
function logicalLines(text: string): Array<{ line: number; text: string; indented: boolean }> {
  const out: Array<{ line: number; text: string; indented: boolean }> = []
  let open = 0
  let current: { line: number; text: string; indented: boolean } | undefined
  text.split(/\r?\n/).forEach((raw, i) => {
    let s = ''
    let quoted = false
    for (const ch of raw) {
      if (ch === '"') quoted = !quoted
      if (ch === ';' && !quoted) break
      if (!quoted && ch === '(') open++
      else if (!quoted && ch === ')') open--
      else s += ch
    }
    if (current === undefined) current = { line: i + 1, text: s, indented: /^\s/.test(raw) }
    else current.text += ' ' + s
    if (open < 0) throw new ZoneFileError(`line ${i + 1}: unbalanced )`)
    if (open === 0) {
      if (current.text.trim() !== '') out.push(current)
      current = undefined
    }
  })
  if (open !== 0) throw new ZoneFileError('unbalanced ( at the end of the file')
  return out
}

function tokens(s: string): string[] {
  return s.match(/"[^"]*"|\S+/g) ?? []
}

/** Reads `text` with `origin` as the starting `$ORIGIN`. */
export function parseZoneFile(text: string, origin: string): TextRecord[] {
  let org = origin.toLowerCase().replace(/\.$/, '')
  let ttl = 3600
  let owner: string | undefined
  const out: TextRecord[] = []
  for (const { line, text: l, indented } of logicalLines(text)) {
    const t = tokens(l)
    if (t[0] === '$ORIGIN') {
      org = absolute(t[1] ?? '', org)
      continue
    }
    if (t[0] === '$TTL') {
      ttl = Number(t[1])
      if (!Number.isInteger(ttl) || ttl < 0) throw new ZoneFileError(`line ${line}: bad $TTL`)
      continue
    }
    if (t[0]?.startsWith('$') === true) throw new ZoneFileError(`line ${line}: ${t[0]} not supported`)
    if (!indented) owner = absolute(t.shift()!, org)
    if (owner === undefined) throw new ZoneFileError(`line ${line}: no owner name`)
    let recTtl = ttl
    let typeText: string | undefined
    while (t.length > 0) {
      const tok = t.shift()!
      const up = tok.toUpperCase()
      if (/^\d+$/.test(tok)) recTtl = Number(tok)
      else if (up === 'IN') continue
      else {
        typeText = up
        break
      }
    }
    const type = typeText === undefined ? undefined : (TYPES[typeText] ?? /^TYPE(\d+)$/.exec(typeText)?.[1])
    if (type === undefined) throw new ZoneFileError(`line ${line}: unknown or missing type ${typeText ?? ''}`)
    const n = Number(type)
    if (t.length === 0) throw new ZoneFileError(`line ${line}: no data`)
    out.push({ name: owner, type: n, ttl: recTtl, data: recordData(n, t, org, line) })
  }
  return out
}

function recordData(type: number, t: string[], origin: string, line: number): string {
  if (NAME_TYPES.has(type)) {
    if (t.length !== 1) throw new ZoneFileError(`line ${line}: one name expected`)
    return absolute(t[0]!, origin)
  }
  if (type === TYPE_SOA) {
    if (t.length !== 7 || !t.slice(2).every((x) => /^\d+$/.test(x))) throw new ZoneFileError(`line ${line}: bad SOA`)
    return [absolute(t[0]!, origin), absolute(t[1]!, origin), ...t.slice(2)].join(' ')
  }
  if (type === TYPE_TXT) return t.map((x) => x.replace(/^"|"$/g, '')).join('')
  return t.join(' ')
}
