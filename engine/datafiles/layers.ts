/**
 * Layering of data files (`datafiles.file`, an ordered list): "each file is a set of corrections
 * to the files listed after it". So the FIRST file wins, and a `-` in a file deletes the entry
 * from all the files after it.
 *
 * Why `readLayers` yields the LAST file first
 * -------------------------------------------
 * A builder with tens of millions of lines cannot hold every layer in memory to resolve them.
 * It can, however, apply operations to its store one by one (LMDB puts and deletes in batched
 * transactions). If the files are applied from the last to the first, each file's operations
 * land on top of everything listed after it, so for every key the final state is decided by the
 * op of the first-listed file that mentions it:
 *
 *   files = [corrections.txt, vendor.txt, ut1.txt]        applied: ut1 → vendor → corrections
 *   ut1:          a.example 30                             put a.example [30]
 *   vendor:       a.example 40,41                          put a.example [40,41]   (replaces)
 *   corrections:  a.example -                              del a.example            → gone
 *
 * - A name in file 1 replaces what files 2..n said about it: a put replaces the whole value, it
 *   is not a union (a correction that wants both sets of categories lists both).
 * - `-` in file 1 deletes the name even when files 2..n have it: they were applied before.
 * - `-` in file 2 never touches file 1's entry: file 1 is applied after it.
 * - `-` deletes that exact key only (`example.com -` leaves `a.example.com` alone), and a `-`
 *   for a key no later file has is a no-op.
 * - Within one file a repeated key: the later line wins (it is applied later).
 *
 * Memory stays bounded by one line plus the error log: nothing is kept per key here.
 */
import { resolve } from 'node:path'
import { ErrorLog, parseDataFile, type DataFileError, type ParseOptions } from './parse.js'

export type LayerOp =
  | {
      readonly op: 'put'
      readonly key: string
      readonly isUrl: boolean
      readonly cats: readonly number[]
      readonly file: string
      readonly line: number
    }
  | { readonly op: 'del'; readonly key: string; readonly isUrl: boolean; readonly file: string; readonly line: number }

export interface LayerStats {
  /** The file as listed in `datafiles.file`. */
  readonly file: string
  /** 0-based position in `datafiles.file` (0 = highest priority). */
  readonly priority: number
  /** Entries with categories (puts). */
  entries: number
  /** `-` entries (deletes). */
  deletions: number
  urlEntries: number
  errors: number
  /** Category number → entries of this file that name it (before merging with other files). */
  readonly perCategory: Map<number, number>
}

export interface LayersReport {
  /** One per file, in the configured order (index = priority), filled in as files are read. */
  readonly layers: LayerStats[]
  readonly errorLog: ErrorLog
  /** The kept errors (first `maxErrors`) across all files. */
  readonly errors: readonly DataFileError[]
  /** All errors, including those not kept. */
  readonly errorCount: number
}

export interface ReadLayersOptions {
  /** Category check, usually `taxonomy.has`; unknown numbers become errors. */
  readonly isKnownCategory?: (n: number) => boolean
  /** How many errors are kept in memory (all are counted). Default 100. */
  readonly maxErrors?: number
  /** Filled in while reading; read it after the iteration ends. Default: a fresh one. */
  readonly report?: LayersReport
  /** Called when a file has been read completely. */
  readonly onLayer?: (stats: LayerStats) => void
}

export function createLayersReport(maxErrors = 100): LayersReport {
  const errorLog = new ErrorLog(maxErrors)
  return {
    layers: [],
    errorLog,
    get errors() {
      return errorLog.errors
    },
    get errorCount() {
      return errorLog.count
    }
  }
}

/**
 * Streams the operations of all data files in application order: the last listed file first,
 * the first listed (highest priority) last. Applying the ops in this order with plain put
 * (replace) and delete gives the layered result (see the module comment).
 * Files are resolved against `path` (the config's `datafiles.path`) unless absolute.
 * The generator's return value is the report (also available through `opts.report`).
 */
export async function* readLayers(
  path: string,
  files: readonly string[],
  opts: ReadLayersOptions = {}
): AsyncGenerator<LayerOp, LayersReport, undefined> {
  const report = opts.report ?? createLayersReport(opts.maxErrors)
  const parseOpts: ParseOptions =
    opts.isKnownCategory === undefined
      ? { errors: report.errorLog }
      : { errors: report.errorLog, isKnownCategory: opts.isKnownCategory }
  for (let priority = 0; priority < files.length; priority++) {
    report.layers[priority] = {
      file: files[priority]!,
      priority,
      entries: 0,
      deletions: 0,
      urlEntries: 0,
      errors: 0,
      perCategory: new Map()
    }
  }
  for (let priority = files.length - 1; priority >= 0; priority--) {
    const stats = report.layers[priority]!
    const errorsBefore = report.errorLog.count
    for await (const e of parseDataFile(resolve(path, stats.file), parseOpts, stats.file)) {
      if (e.isUrl) stats.urlEntries++
      if (e.cats === null) {
        stats.deletions++
        yield { op: 'del', key: e.key, isUrl: e.isUrl, file: e.file, line: e.line }
      } else {
        stats.entries++
        for (const c of e.cats) stats.perCategory.set(c, (stats.perCategory.get(c) ?? 0) + 1)
        yield { op: 'put', key: e.key, isUrl: e.isUrl, cats: e.cats, file: e.file, line: e.line }
      }
    }
    stats.errors = report.errorLog.count - errorsBefore
    opts.onLayer?.(stats)
  }
  return report
}

/** The merged value of one key: categories and where they came from. */
export interface MergedEntry {
  readonly isUrl: boolean
  readonly cats: readonly number[]
  readonly file: string
  readonly line: number
}

export interface MergeResult {
  /** key → merged entry, for every key that survives the layering. */
  readonly entries: Map<string, MergedEntry>
  readonly report: LayersReport
}

/**
 * Merges the layers into an in-memory Map by applying `readLayers` ops in order. For small sets
 * (demo data, tests, tools that inspect a few files); a builder for the full database applies
 * the same ops to LMDB instead.
 */
export async function mergeLayers(
  path: string,
  files: readonly string[],
  opts: ReadLayersOptions = {}
): Promise<MergeResult> {
  const report = opts.report ?? createLayersReport(opts.maxErrors)
  const entries = new Map<string, MergedEntry>()
  for await (const op of readLayers(path, files, { ...opts, report })) {
    if (op.op === 'put') entries.set(op.key, { isUrl: op.isUrl, cats: op.cats, file: op.file, line: op.line })
    else entries.delete(op.key)
  }
  return { entries, report }
}
