/**
 * Streaming parser for data files (`datafiles.file`): one entry per line,
 *
 *   name<TAB or spaces>cat[,cat…]      # trailing comment
 *   # whole-line comment
 *   example.com/some/Path   50
 *   old.example             -          # delete from all later files
 *
 * The file is read with node:readline over a read stream, so memory does not grow with the file.
 * Malformed lines never disappear silently: each is an error with file and line number, collected
 * by an `ErrorLog` that keeps the first `max` errors and counts all of them.
 *
 * A `#` starts a comment only at the start of a line or after whitespace, so a URL entry such as
 * `example.com/page#x` keeps its `#` (names and paths cannot contain whitespace).
 */
import { open } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { normalizeDomain, normalizeUrlEntry } from '../names/index.js'
import { MAX_CATEGORY } from '../categories/index.js'

/** One parsed line. `cats` is sorted ascending without duplicates; `null` means "delete". */
export interface DataEntry {
  readonly key: string
  readonly isUrl: boolean
  readonly cats: readonly number[] | null
  readonly file: string
  readonly line: number
}

export interface DataFileError {
  readonly file: string
  readonly line: number
  readonly message: string
  /** The offending line (cut to 200 characters). */
  readonly text: string
}

/** Collects errors: keeps the first `max` in memory, counts every one. */
export class ErrorLog {
  readonly max: number
  readonly errors: DataFileError[] = []
  count = 0
  constructor(max = 100) {
    this.max = max
  }

  add(error: DataFileError): void {
    this.count++
    if (this.errors.length < this.max) this.errors.push(error)
  }

  /** `file:line: message` lines for the kept errors, plus a note on how many more were dropped. */
  format(): string {
    const lines = this.errors.map((e) => `${e.file}:${e.line}: ${e.message}: ${e.text}`)
    if (this.count > this.errors.length) lines.push(`… and ${this.count - this.errors.length} more errors`)
    return lines.join('\n')
  }
}

export interface ParseOptions {
  /** Category numbers that exist (the taxonomy's `has`); without it any 1..65535 is accepted. */
  readonly isKnownCategory?: (n: number) => boolean
  /** Where malformed lines go; default: a fresh ErrorLog that the caller cannot see. */
  readonly errors?: ErrorLog
}

export type ParsedLine =
  | { readonly kind: 'blank' }
  | { readonly kind: 'entry'; readonly key: string; readonly isUrl: boolean; readonly cats: readonly number[] | null }
  | { readonly kind: 'error'; readonly message: string }

const WS = /[\t ]+/

/**
 * Parses one line of a data file (no I/O). Exported for the API and tools that take a single entry.
 * Category 0 is reserved (Non-Existing Domain) and is an error in a data file.
 */
export function parseDataLine(text: string, isKnownCategory?: (n: number) => boolean): ParsedLine {
  let s = text
  const hash = commentStart(s)
  if (hash !== -1) s = s.slice(0, hash)
  s = s.trim()
  if (s.length === 0) return BLANK
  const fields = s.split(WS)
  if (fields.length === 1) return { kind: 'error', message: 'missing category list' }
  if (fields.length > 2)
    return {
      kind: 'error',
      message: 'expected `name categories`, found more fields (no spaces inside the category list)'
    }
  const [rawName, rawCats] = fields as [string, string]
  let key: string
  let isUrl: boolean
  if (rawName.includes('/')) {
    const url = normalizeUrlEntry(rawName)
    if (url === undefined) return { kind: 'error', message: `invalid URL entry ${JSON.stringify(rawName)}` }
    key = url.key
    isUrl = true
  } else {
    const name = normalizeDomain(rawName)
    if (name === undefined) return { kind: 'error', message: `invalid name ${JSON.stringify(rawName)}` }
    key = name
    isUrl = false
  }
  if (rawCats === '-') return { kind: 'entry', key, isUrl, cats: null }
  const cats: number[] = []
  for (const part of rawCats.split(',')) {
    if (!/^\d{1,5}$/.test(part)) return { kind: 'error', message: `invalid category ${JSON.stringify(part)}` }
    const n = Number(part)
    if (n === 0) return { kind: 'error', message: 'category 0 is reserved (Non-Existing Domain)' }
    if (n > MAX_CATEGORY || (isKnownCategory !== undefined && !isKnownCategory(n))) {
      return { kind: 'error', message: `unknown category ${n}` }
    }
    if (!cats.includes(n)) cats.push(n)
  }
  cats.sort((a, b) => a - b)
  return { kind: 'entry', key, isUrl, cats }
}

const BLANK: ParsedLine = Object.freeze({ kind: 'blank' })

/** Index of a `#` at the start of the line or after whitespace, or -1. */
function commentStart(s: string): number {
  for (let i = s.indexOf('#'); i !== -1; i = s.indexOf('#', i + 1)) {
    if (i === 0) return 0
    const prev = s.charCodeAt(i - 1)
    if (prev === 0x20 || prev === 0x09) return i
  }
  return -1
}

/**
 * Streams the entries of one data file in line order. `file` labels entries and errors (use the
 * name as configured); `filePath` is where it is read from. Malformed lines go to `opts.errors`.
 * A missing or unreadable file rejects (a configured data file that is absent is a config error).
 */
export async function* parseDataFile(
  filePath: string,
  opts: ParseOptions = {},
  file: string = filePath
): AsyncGenerator<DataEntry, void, undefined> {
  const errors = opts.errors ?? new ErrorLog()
  // Open first so a missing file rejects here: readline's iterator does not reliably surface
  // errors of its input stream.
  const handle = await open(filePath, 'r')
  const input = handle.createReadStream({ encoding: 'utf8' })
  const rl = createInterface({ input, crlfDelay: Infinity })
  let line = 0
  try {
    for await (const raw of rl) {
      line++
      // A UTF-8 byte order mark survives decoding as U+FEFF; editors on Windows add it.
      const text = line === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
      const parsed = parseDataLine(text, opts.isKnownCategory)
      if (parsed.kind === 'entry') yield { key: parsed.key, isUrl: parsed.isUrl, cats: parsed.cats, file, line }
      else if (parsed.kind === 'error') errors.add({ file, line, message: parsed.message, text: text.slice(0, 200) })
    }
  } finally {
    rl.close()
    input.destroy()
    await handle.close().catch(() => {})
  }
}
