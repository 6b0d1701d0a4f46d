/**
 * The importers' common half: an in-memory set of entries (key → union of categories) and a
 * deterministic writer for the data-file format (engine/datafiles).
 *
 * Sources are read as streams, line by line, but the output must be sorted and deduplicated, and a
 * name found in several source categories must get the union of them, so every distinct key is
 * held in memory until the end. That is a few hundred bytes per key: fine for the millions of
 * names of UT1 or a large hosts list. A bounded-memory variant would need an external sort.
 */
import { createWriteStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import type { Writable } from 'node:stream'

export interface ImportCounts {
  /** Candidate entries seen in the sources (comment and blank lines excluded). */
  read: number
  /** Entries deliberately not imported: unsupported rules, localhost, unmapped categories, regexes. */
  skipped: number
  /** Entries with an invalid name. */
  invalid: number
}

/** Distinct keys with the union of their categories, plus the counts of what was read. */
export class EntryCollector {
  readonly #entries = new Map<string, number[]>()
  readonly counts: ImportCounts = { read: 0, skipped: 0, invalid: 0 }

  /** Adds `cats` to `key` (a normalised domain or URL entry key). */
  add(key: string, cats: readonly number[]): void {
    const have = this.#entries.get(key)
    if (have === undefined) {
      this.#entries.set(key, [...cats])
      return
    }
    for (const c of cats) if (!have.includes(c)) have.push(c)
  }

  get size(): number {
    return this.#entries.size
  }

  /** Entries sorted by key (UTF-16 code unit order), categories ascending. */
  sorted(): Array<[string, number[]]> {
    const keys = [...this.#entries.keys()].sort()
    return keys.map((k) => [k, [...this.#entries.get(k)!].sort((a, b) => a - b)])
  }
}

/** Lines of a text file, streamed; a leading BOM is dropped. */
export async function* readLines(file: string): AsyncGenerator<string, void, undefined> {
  // Open first so a missing file rejects here (readline does not reliably pass on stream errors).
  const handle = await open(file, 'r')
  const input = handle.createReadStream({ encoding: 'utf8' })
  const rl = createInterface({ input, crlfDelay: Infinity })
  let first = true
  try {
    for await (const line of rl) {
      yield first && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line
      first = false
    }
  } finally {
    rl.close()
    input.destroy()
    await handle.close().catch(() => {})
  }
}

/**
 * Writes the collected entries as a data file: `# header` lines, then `key<TAB>cat,cat` sorted by
 * key. `out` is a path or an open stream (left open). Returns the number of entries written.
 */
export async function writeDataFile(
  out: string | Writable,
  entries: EntryCollector,
  header: readonly string[]
): Promise<number> {
  const stream = typeof out === 'string' ? createWriteStream(out, { encoding: 'utf8' }) : out
  let n = 0
  let chunk = header.map((h) => `# ${h}\n`).join('')
  const flush = async (): Promise<void> => {
    if (!stream.write(chunk)) await once(stream, 'drain')
    chunk = ''
  }
  for (const [key, cats] of entries.sorted()) {
    chunk += `${key}\t${cats.join(',')}\n`
    n++
    if (chunk.length > 65536) await flush()
  }
  await flush()
  if (typeof out === 'string') {
    stream.end()
    await once(stream, 'finish')
  }
  return n
}
