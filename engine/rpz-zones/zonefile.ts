/**
 * A master file (RFC 1035 5) as RPZ feeds ship it, read into records: `$ORIGIN`, `$TTL`, `@`,
 * relative names, an owner carried over from the line before, comments, and parentheses over
 * several lines (the SOA). Types other than SOA, NS, CNAME, A, AAAA and TXT are kept as their text.
 * Any line it cannot read throws with its line number: a malformed feed is refused whole.
 */
import { EngineError } from '../errors.js'
import { createReadStream } from 'node:fs'
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
/** Characters that make a line more than its tokens: comments, quotes, parentheses. */
const SPECIAL = /[;()"]/

export class ZoneFileError extends EngineError {
  constructor(message: string, options?: ErrorOptions) {
    super('ENGINE_RPZ_ZONE_FILE', message, options)
    this.name = 'ZoneFileError'
  }
}

function absolute(name: string, origin: string): string {
  if (name === '@') return origin
  if (name.endsWith('.')) return name.slice(0, -1).toLowerCase()
  return (origin === '' ? name : `${name}.${origin}`).toLowerCase()
}

/**
 * Reads a zone file line by line (a file of millions of records is never held whole): `line` takes
 * each physical line, joins parenthesised continuations, and hands every record to `onRecord`.
 */
export class ZoneFileReader {
  private org: string
  private ttl = 3600
  private owner: string | undefined
  private open = 0
  private lineNo = 0
  private pending: { line: number; text: string; indented: boolean } | undefined
  private readonly onRecord: (r: TextRecord) => void

  constructor(origin: string, onRecord: (r: TextRecord) => void) {
    this.org = origin.toLowerCase().replace(/\.$/, '')
    this.onRecord = onRecord
  }

  /** One physical line (without its line break). */
  line(raw: string): void {
    this.lineNo++
    // Most lines of a large feed have no comment, quote or parenthesis: taken as they are.
    const plain = !SPECIAL.test(raw)
    let s = plain ? raw : ''
    let quoted = false
    if (!plain)
      for (const ch of raw) {
        if (ch === '"') quoted = !quoted
        if (ch === ';' && !quoted) break
        if (!quoted && ch === '(') this.open++
        else if (!quoted && ch === ')') this.open--
        else s += ch
      }
    if (this.pending === undefined) this.pending = { line: this.lineNo, text: s, indented: /^\s/.test(raw) }
    else this.pending.text += ' ' + s
    if (this.open < 0) throw new ZoneFileError(`line ${this.lineNo}: unbalanced )`)
    if (this.open === 0) {
      const l = this.pending
      this.pending = undefined
      if (l.text.trim() !== '') this.logical(l.line, l.text, l.indented)
    }
  }

  /** The end of the file: an open parenthesis is an error. */
  end(): void {
    if (this.open !== 0) throw new ZoneFileError('unbalanced ( at the end of the file')
  }

  private logical(line: number, l: string, indented: boolean): void {
    const t = tokens(l)
    if (t[0] === '$ORIGIN') {
      this.org = absolute(t[1] ?? '', this.org)
      return
    }
    if (t[0] === '$TTL') {
      this.ttl = Number(t[1])
      if (!Number.isInteger(this.ttl) || this.ttl < 0) throw new ZoneFileError(`line ${line}: bad $TTL`)
      return
    }
    if (t[0]?.startsWith('$') === true) throw new ZoneFileError(`line ${line}: ${t[0]} not supported`)
    if (!indented) this.owner = absolute(t.shift()!, this.org)
    if (this.owner === undefined) throw new ZoneFileError(`line ${line}: no owner name`)
    let recTtl = this.ttl
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
    this.onRecord({ name: this.owner, type: n, ttl: recTtl, data: recordData(n, t, this.org, line) })
  }
}

function tokens(s: string): string[] {
  return s.match(/"[^"]*"|\S+/g) ?? []
}

/** Reads `text` with `origin` as the starting `$ORIGIN`. */
export function parseZoneFile(text: string, origin: string): TextRecord[] {
  const out: TextRecord[] = []
  const reader = new ZoneFileReader(origin, (r) => out.push(r))
  for (const line of text.split(/\r?\n/)) reader.line(line)
  reader.end()
  return out
}

/** Streams the zone file at `path` into `onRecord`, one line at a time; rejects on the first bad line. */
export async function readZoneFile(path: string, origin: string, onRecord: (r: TextRecord) => void): Promise<void> {
  const reader = new ZoneFileReader(origin, onRecord)
  let rest = ''
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const text = rest + (chunk as string)
    let from = 0
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      reader.line(text.charCodeAt(nl - 1) === 13 ? text.slice(from, nl - 1) : text.slice(from, nl))
      from = nl + 1
    }
    rest = text.slice(from)
  }
  if (rest !== '') reader.line(rest.endsWith('\r') ? rest.slice(0, -1) : rest)
  reader.end()
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
