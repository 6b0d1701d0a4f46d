/**
 * The category taxonomy: `catgroups.json` (Russian, the default) or `catgroups_en.json` (English)
 * in the spec's group format, plus `categories.meta.json` with per-category flags (`bad`), which
 * the spec's format has no room for.
 *
 * Files are validated once at load and turned into an immutable object; the API serves
 * `groups` / `groupRecords` / `categories` as they are (built once, frozen), and the DNS and
 * categorization paths ask `name(n)` / `isBad(n)` per hit.
 *
 * Category 0 (`Non-Existing Domain`) is an ordinary entry of the files, in the last group
 * ("Служебные" / "Service"), so both languages name it from data; it is not `bad`. Data files
 * may not assign it: the data-file parser rejects category 0 (see docs/categories.md).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EngineError } from '../errors.js'

export type TaxonomyLanguage = 'ru' | 'en'

export const CATGROUPS_FILE: Readonly<Record<TaxonomyLanguage, string>> = Object.freeze({
  ru: 'catgroups.json',
  en: 'catgroups_en.json'
})
export const CATEGORY_META_FILE = 'categories.meta.json'

/** Category numbers fit in a uint16: the store encodes them that way. */
export const MAX_CATEGORY = 65535

/** The spec's category group list: one-key objects, group name → { "number": name }. */
export type CategoryGroups = ReadonlyArray<Readonly<Record<string, Readonly<Record<string, string>>>>>

/** The management API's Category group record. */
export interface CategoryGroupRecord {
  readonly group: string
  readonly categories: Readonly<Record<string, string>>
}

export interface CategoryMeta {
  readonly bad: boolean
}

export interface Taxonomy {
  readonly lang: TaxonomyLanguage
  /** The spec's format (GET /catgroups), ready to serialise. */
  readonly groups: CategoryGroups
  /** GET /categorygroups/ of the management API. */
  readonly groupRecords: readonly CategoryGroupRecord[]
  /** GET /categories/ of the management API: number (string) → name, all groups. */
  readonly categories: Readonly<Record<string, string>>
  readonly names: ReadonlyMap<number, string>
  /** All category numbers, ascending (0 included). */
  readonly numbers: readonly number[]
  name(n: number): string | undefined
  isBad(n: number): boolean
  has(n: number): boolean
  /** Name of the group that holds category `n`. */
  groupOf(n: number): string | undefined
}

/** Parsed `categories.meta.json`: number → flags. */
export type CategoryMetaMap = ReadonlyMap<number, CategoryMeta>

/**
 * Loads and validates the taxonomy of one language from `dir` (the config's `datafiles.cats`).
 * Throws `EngineError('ENGINE_TAXONOMY_INVALID')` naming the file and the offending key.
 *
 * @example const tax = loadTaxonomy('conf', 'en'); tax.name(40) === 'Social networks'
 */
export function loadTaxonomy(dir: string, lang: TaxonomyLanguage): Taxonomy {
  if (lang !== 'ru' && lang !== 'en') {
    throw new EngineError(
      'ENGINE_TAXONOMY_INVALID',
      `unknown taxonomy language ${JSON.stringify(lang)}: expected ru or en`
    )
  }
  const groupsPath = join(dir, CATGROUPS_FILE[lang])
  const metaPath = join(dir, CATEGORY_META_FILE)
  const groups = parseCategoryGroups(readJson(groupsPath), groupsPath)
  const meta = parseCategoryMeta(readJson(metaPath), metaPath)
  return buildTaxonomy(lang, groups, meta, groupsPath, metaPath)
}

function readJson(file: string): unknown {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new EngineError('ENGINE_TAXONOMY_INVALID', `${file}: cannot read: ${(err as Error).message}`, { cause: err })
  }
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    throw new EngineError('ENGINE_TAXONOMY_INVALID', `${file}: invalid JSON: ${(err as Error).message}`, { cause: err })
  }
}

function invalid(file: string, where: string, message: string): EngineError {
  return new EngineError('ENGINE_TAXONOMY_INVALID', `${file}: ${where} ${message}`)
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A category key is the canonical decimal form of an integer 0..MAX_CATEGORY ("7", not "07"). */
function parseCategoryKey(key: string): number | undefined {
  if (!/^(0|[1-9]\d{0,4})$/.test(key)) return undefined
  const n = Number(key)
  return n <= MAX_CATEGORY ? n : undefined
}

interface ParsedGroup {
  readonly group: string
  readonly categories: ReadonlyArray<readonly [number, string]>
}

/**
 * Validates the spec's group format. `file` only labels error messages.
 * Rules: a non-empty array; each element an object with exactly one key (a non-empty group name,
 * unique); its value an object of category key → non-empty name; every number unique overall.
 */
export function parseCategoryGroups(raw: unknown, file: string): ParsedGroup[] {
  if (!Array.isArray(raw) || raw.length === 0) throw invalid(file, '/', 'must be a non-empty JSON array of groups')
  const seenGroups = new Set<string>()
  const seenNumbers = new Map<number, string>()
  const out: ParsedGroup[] = []
  raw.forEach((element: unknown, i) => {
    if (!isPlainObject(element)) throw invalid(file, `/${i}`, 'must be an object with one key, the group name')
    const keys = Object.keys(element)
    if (keys.length !== 1)
      throw invalid(file, `/${i}`, `must have exactly one key (the group name), found ${keys.length}`)
    const group = keys[0]!
    if (group.trim().length === 0) throw invalid(file, `/${i}`, 'has an empty group name')
    if (seenGroups.has(group)) throw invalid(file, `/${i}`, `repeats the group name ${JSON.stringify(group)}`)
    seenGroups.add(group)
    const cats = element[group]
    if (!isPlainObject(cats) || Object.keys(cats).length === 0) {
      throw invalid(file, `/${i}/${group}`, 'must be a non-empty object mapping category numbers to names')
    }
    const categories: Array<readonly [number, string]> = []
    for (const [key, name] of Object.entries(cats)) {
      const n = parseCategoryKey(key)
      if (n === undefined)
        throw invalid(file, `/${i}/${group}/${key}`, `is not a category number (0..${MAX_CATEGORY}, no leading zeros)`)
      if (typeof name !== 'string' || name.trim().length === 0)
        throw invalid(file, `/${i}/${group}/${key}`, 'must be a non-empty string')
      const other = seenNumbers.get(n)
      if (other !== undefined)
        throw invalid(file, `/${i}/${group}/${key}`, `repeats category ${n}, already in group ${JSON.stringify(other)}`)
      seenNumbers.set(n, group)
      categories.push([n, name])
    }
    out.push({ group, categories })
  })
  if (!seenNumbers.has(0)) throw invalid(file, '/', 'must name category 0 (Non-Existing Domain)')
  return out
}

/** Validates `categories.meta.json`: `{ "categories": { "<n>": { "bad": boolean } } }`. */
export function parseCategoryMeta(raw: unknown, file: string): Map<number, CategoryMeta> {
  if (!isPlainObject(raw) || !isPlainObject(raw['categories']))
    throw invalid(file, '/', 'must be an object with a "categories" object')
  for (const key of Object.keys(raw)) {
    if (key !== 'categories' && key !== '$comment') throw invalid(file, `/${key}`, 'is not a known key')
  }
  const out = new Map<number, CategoryMeta>()
  for (const [key, value] of Object.entries(raw['categories'])) {
    const n = parseCategoryKey(key)
    if (n === undefined)
      throw invalid(file, `/categories/${key}`, `is not a category number (0..${MAX_CATEGORY}, no leading zeros)`)
    if (!isPlainObject(value) || typeof value['bad'] !== 'boolean')
      throw invalid(file, `/categories/${key}`, 'must be an object with a boolean "bad"')
    for (const k of Object.keys(value)) {
      if (k !== 'bad') throw invalid(file, `/categories/${key}/${k}`, 'is not a known flag')
    }
    out.set(n, Object.freeze({ bad: value['bad'] }))
  }
  return out
}

function buildTaxonomy(
  lang: TaxonomyLanguage,
  parsed: ParsedGroup[],
  meta: CategoryMetaMap,
  groupsFile: string,
  metaFile: string
): Taxonomy {
  const names = new Map<number, string>()
  const groupOf = new Map<number, string>()
  const groups: Array<Record<string, Readonly<Record<string, string>>>> = []
  const groupRecords: CategoryGroupRecord[] = []
  for (const { group, categories } of parsed) {
    const record: Record<string, string> = {}
    for (const [n, name] of categories) {
      if (!meta.has(n))
        throw invalid(metaFile, `/categories/${n}`, `is missing: category ${n} is defined in ${groupsFile}`)
      record[String(n)] = name
      names.set(n, name)
      groupOf.set(n, group)
    }
    Object.freeze(record)
    groups.push(Object.freeze({ [group]: record }))
    groupRecords.push(Object.freeze({ group, categories: record }))
  }
  for (const n of meta.keys()) {
    if (!names.has(n)) throw invalid(metaFile, `/categories/${n}`, `is not a category of ${groupsFile}`)
  }
  const numbers = Object.freeze([...names.keys()].sort((a, b) => a - b))
  const categories: Record<string, string> = {}
  for (const n of numbers) categories[String(n)] = names.get(n)!
  const bad = new Set<number>()
  for (const [n, m] of meta) if (m.bad) bad.add(n)
  const frozenNames: ReadonlyMap<number, string> = new ReadonlyMapView(names)
  return Object.freeze({
    lang,
    groups: Object.freeze(groups),
    groupRecords: Object.freeze(groupRecords),
    categories: Object.freeze(categories),
    names: frozenNames,
    numbers,
    name: (n: number) => names.get(n),
    isBad: (n: number) => bad.has(n),
    has: (n: number) => names.has(n),
    groupOf: (n: number) => groupOf.get(n)
  })
}

/** A Map wrapper without mutators, so a frozen taxonomy cannot be changed through `names`. */
class ReadonlyMapView<K, V> implements ReadonlyMap<K, V> {
  readonly #map: Map<K, V>
  constructor(map: Map<K, V>) {
    this.#map = map
  }
  get size(): number {
    return this.#map.size
  }
  get(key: K): V | undefined {
    return this.#map.get(key)
  }
  has(key: K): boolean {
    return this.#map.has(key)
  }
  forEach(cb: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    this.#map.forEach((v, k) => cb.call(thisArg, v, k, this))
  }
  entries(): MapIterator<[K, V]> {
    return this.#map.entries()
  }
  keys(): MapIterator<K> {
    return this.#map.keys()
  }
  values(): MapIterator<V> {
    return this.#map.values()
  }
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map[Symbol.iterator]()
  }
}
