/**
 * `filterd import …`: converts third-party lists into a data file (docs/import.md).
 *
 *   filterd import ut1 <dir> --out <file> [--mapping conf/import/ut1.json] [--cats conf]
 *   filterd import domains|hosts|adblock <file>… --category <n>[,<n>…] --out <file> [--cats conf]
 *
 * `--out -` writes to standard output. Counts go to standard error.
 */
import { parseArgs } from 'node:util'
import { existsSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Writable } from 'node:stream'
import { loadTaxonomy, type Taxonomy } from '../../engine/categories/index.js'
import { EntryCollector, writeDataFile } from './collect.js'
import { importList, LIST_FORMATS, type ListFormat } from './formats.js'
import { importUt1, loadUt1Mapping } from './ut1.js'

export { EntryCollector, writeDataFile, readLines } from './collect.js'
export type { ImportCounts } from './collect.js'
export { importDomainList, importHosts, importAdblock, importList, addName, LIST_FORMATS } from './formats.js'
export type { ListFormat } from './formats.js'
export { importUt1, loadUt1Mapping, parseUt1Mapping } from './ut1.js'
export type { Ut1Mapping, Ut1CategoryReport } from './ut1.js'

/** The repository's conf/ (dist/tools/import/ → ../../../conf). */
const CONF_DIR = fileURLToPath(new URL('../../../conf/', import.meta.url))
export const DEFAULT_UT1_MAPPING = fileURLToPath(new URL('../../../conf/import/ut1.json', import.meta.url))

export const IMPORT_USAGE = `usage:
  filterd import ut1 <dir> --out <file> [--mapping <ut1.json>] [--cats <dir>]
  filterd import domains|hosts|adblock <file>... --category <n>[,<n>...] --out <file> [--cats <dir>]

  ut1       squidGuard/UT1 tree: <category>/domains and <category>/urls, mapped by --mapping
            (default conf/import/ut1.json)
  domains   one name per line, # comments
  hosts     "0.0.0.0 name" / "127.0.0.1 name" lines; localhost entries are skipped
  adblock   "||name^" rules; other rules are counted and skipped
  --out     data file to write ("-" for standard output)
  --cats    directory of catgroups*.json used to check category numbers (default conf/)
`

export interface ImportIo {
  readonly stdout: Writable
  readonly stderr: Writable
}

class UsageError extends Error {}

/**
 * Entry point for `filterd import`; `argv` are the arguments after `import`.
 * Resolves to the exit code: 0 done, 1 failed, 2 bad arguments (usage printed).
 */
export async function runImport(argv: readonly string[], io: ImportIo = process): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        out: { type: 'string', short: 'o' },
        category: { type: 'string', short: 'c' },
        mapping: { type: 'string' },
        cats: { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (err) {
    io.stderr.write(`filterd import: ${(err as Error).message}\n${IMPORT_USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    io.stdout.write(IMPORT_USAGE)
    return 0
  }
  try {
    const [format, ...sources] = positionals
    if (format === undefined) throw new UsageError('missing format')
    if (sources.length === 0) throw new UsageError('missing source')
    if (values.out === undefined) throw new UsageError('missing --out')
    const taxonomy = loadCats(values.cats)
    const isKnown = taxonomy === undefined ? undefined : (n: number) => taxonomy.has(n) && n !== 0
    const into = new EntryCollector()
    const header: string[] = []
    if (format === 'ut1' || format === 'squidguard') {
      if (sources.length !== 1) throw new UsageError('ut1 takes one directory')
      if (values.category !== undefined) throw new UsageError('ut1 takes --mapping, not --category')
      const mappingFile = values.mapping ?? DEFAULT_UT1_MAPPING
      const mapping = loadUt1Mapping(mappingFile, isKnown)
      const reports = await importUt1(sources[0]!, mapping, into)
      for (const r of reports) {
        const what =
          r.note ?? `-> ${r.cats.join(',')}: ${r.entries} entries, ${r.invalid} invalid, ${r.skipped} skipped`
        io.stderr.write(`  ${r.source}: ${what}\n`)
      }
      header.push(
        `Imported by filterd import ${format} from ${basename(sources[0]!)} with mapping ${basename(mappingFile)}.`,
        'Source: UT1 blacklists, Université Toulouse 1 Capitole (Fabrice Prigent), CC BY-SA 4.0.',
        'This file is a modified version of that data and is distributed under CC BY-SA 4.0.'
      )
    } else if ((LIST_FORMATS as readonly string[]).includes(format)) {
      if (values.category === undefined) throw new UsageError(`${format} needs --category`)
      const cats = parseCategoryList(values.category, isKnown)
      for (const source of sources) await importList(format as ListFormat, source, cats, into)
      header.push(
        `Imported by filterd import ${format} from ${sources.map((s) => basename(s)).join(', ')} as category ${cats.join(',')}.`
      )
    } else {
      throw new UsageError(`unknown format ${JSON.stringify(format)}`)
    }
    const written = await writeDataFile(values.out === '-' ? io.stdout : values.out, into, header)
    const { read, skipped, invalid } = into.counts
    io.stderr.write(`filterd import: ${written} written, ${skipped} skipped, ${invalid} invalid (${read} read)\n`)
    return 0
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`filterd import: ${err.message}\n${IMPORT_USAGE}`)
      return 2
    }
    io.stderr.write(`filterd import: ${(err as Error).message}\n`)
    return 1
  }
}

/** The taxonomy for checking numbers: the given dir (must load), or conf/ if it exists. */
function loadCats(dir: string | undefined): Taxonomy | undefined {
  if (dir !== undefined) return loadTaxonomy(dir, 'en')
  return existsSync(CONF_DIR) ? loadTaxonomy(CONF_DIR, 'en') : undefined
}

function parseCategoryList(text: string, isKnown?: (n: number) => boolean): number[] {
  const cats: number[] = []
  for (const part of text.split(',')) {
    const n = Number(part)
    if (!/^\d{1,5}$/.test(part) || n === 0 || n > 65535)
      throw new UsageError(`invalid category ${JSON.stringify(part)}`)
    if (isKnown !== undefined && !isKnown(n)) throw new UsageError(`unknown category ${n}`)
    if (!cats.includes(n)) cats.push(n)
  }
  return cats.sort((a, b) => a - b)
}
