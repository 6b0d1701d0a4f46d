/**
 * squidGuard / UT1 directory importer: one directory per source category holding `domains`
 * (or upstream's split `domains.0`, `domains.1`, …) and `urls` (`host/path`). `expressions`
 * (regular expressions) cannot be expressed as data-file entries; their lines are counted as
 * skipped. A mapping file (conf/import/ut1.json) names our category numbers for each source
 * category and resolves UT1's alias names (upstream symlinks such as `porn` → `adult`).
 */
import { readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { importDomainList } from './formats.js'
import { readLines, type EntryCollector } from './collect.js'

export interface Ut1Mapping {
  /** Source category → our category numbers; `[]` = deliberately not imported. */
  readonly categories: ReadonlyMap<string, readonly number[]>
  /** Alias directory name → the category it stands for. */
  readonly aliases: ReadonlyMap<string, string>
}

/** Per source category: what was read from it. */
export interface Ut1CategoryReport {
  readonly source: string
  readonly cats: readonly number[]
  /** Lines read from `domains*` and `urls`. */
  entries: number
  invalid: number
  /** Lines of `expressions` files, and all lines of an unmapped or `[]` category. */
  skipped: number
  /** Why the category was skipped, if it was. */
  note?: string
}

/** Loads and validates a mapping file; `isKnownCategory` (the taxonomy's `has`) checks numbers. */
export function loadUt1Mapping(file: string, isKnownCategory?: (n: number) => boolean): Ut1Mapping {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new Error(`${file}: cannot read mapping: ${(err as Error).message}`, { cause: err })
  }
  return parseUt1Mapping(raw, file, isKnownCategory)
}

export function parseUt1Mapping(raw: unknown, file: string, isKnownCategory?: (n: number) => boolean): Ut1Mapping {
  const obj = raw as { categories?: unknown; aliases?: unknown }
  if (typeof obj !== 'object' || obj === null || typeof obj.categories !== 'object' || obj.categories === null) {
    throw new Error(`${file}: must be an object with "categories"`)
  }
  const categories = new Map<string, readonly number[]>()
  for (const [name, cats] of Object.entries(obj.categories)) {
    if (!Array.isArray(cats) || !cats.every((c) => Number.isInteger(c) && c > 0 && c <= 65535)) {
      throw new Error(`${file}: /categories/${name} must be an array of category numbers (1..65535)`)
    }
    for (const c of cats as number[]) {
      if (isKnownCategory !== undefined && !isKnownCategory(c))
        throw new Error(`${file}: /categories/${name} names unknown category ${c}`)
    }
    categories.set(name, Object.freeze([...(cats as number[])]))
  }
  const aliases = new Map<string, string>()
  if (obj.aliases !== undefined) {
    if (typeof obj.aliases !== 'object' || obj.aliases === null) throw new Error(`${file}: "aliases" must be an object`)
    for (const [alias, target] of Object.entries(obj.aliases)) {
      if (typeof target !== 'string' || !categories.has(target))
        throw new Error(`${file}: /aliases/${alias} must name a category of "categories"`)
      aliases.set(alias, target)
    }
  }
  return { categories, aliases }
}

async function countLines(file: string): Promise<number> {
  let n = 0
  for await (const line of readLines(file)) if (line.trim().length > 0) n++
  return n
}

/**
 * Imports a UT1/squidGuard tree into `into`. An alias directory whose target directory also
 * exists is skipped (it is a copy of the same list); otherwise it is read as its target.
 * Returns one report per source directory, sorted by name.
 */
export async function importUt1(dir: string, mapping: Ut1Mapping, into: EntryCollector): Promise<Ut1CategoryReport[]> {
  const dirents = await readdir(dir, { withFileTypes: true })
  const dirs = new Set(dirents.filter((d) => d.isDirectory() || d.isSymbolicLink()).map((d) => d.name))
  const reports: Ut1CategoryReport[] = []
  for (const source of [...dirs].sort()) {
    const target = mapping.aliases.get(source) ?? source
    const cats = mapping.categories.get(target)
    const report: Ut1CategoryReport = { source, cats: cats ?? [], entries: 0, invalid: 0, skipped: 0 }
    reports.push(report)
    const files = (await readdir(join(dir, source))).sort()
    const lists = files.filter((f) => f === 'domains' || /^domains\.\d+$/.test(f) || f === 'urls')
    if (target !== source && dirs.has(target)) {
      report.note = `alias of ${target}, read there`
      continue
    }
    if (cats === undefined || cats.length === 0) {
      report.note = cats === undefined ? 'not in the mapping' : 'mapped to no category'
      for (const f of lists) report.skipped += await countLines(join(dir, source, f))
      into.counts.read += report.skipped
      into.counts.skipped += report.skipped
      continue
    }
    for (const f of lists) {
      const before = { read: into.counts.read, invalid: into.counts.invalid }
      await importDomainList(join(dir, source, f), cats, into, f === 'urls')
      report.entries += into.counts.read - before.read
      report.invalid += into.counts.invalid - before.invalid
    }
    for (const f of files.filter((x) => x.includes('expression'))) {
      const n = await countLines(join(dir, source, f))
      report.skipped += n
      into.counts.read += n
      into.counts.skipped += n
    }
  }
  return reports
}
