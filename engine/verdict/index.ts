/**
 * The category verdict that the categorization API and the local service answer:
 * `{category, bad, category_name}` (categorization-api.md, "Category verdict").
 * One implementation for both, so a name gets the same answer from either.
 */
import type { Taxonomy } from '../categories/index.js'

export interface CategoryVerdict {
  category: number[]
  bad: boolean
  category_name: string[]
}

/** The verdict for a name's categories: bad when any of them is bad. */
export function verdictOf(categories: readonly number[], taxonomy: Taxonomy): CategoryVerdict {
  return {
    category: [...categories],
    bad: categories.some((c) => taxonomy.isBad(c)),
    category_name: categories.map((c) => taxonomy.name(c) ?? String(c))
  }
}

/** The spec's answer for a name that does not exist in DNS: category [0], not bad. */
export function nonExistingVerdict(taxonomy: Taxonomy): CategoryVerdict {
  return { category: [0], bad: false, category_name: [taxonomy.name(0) ?? 'Non-Existing Domain'] }
}

/**
 * JSON with every non-ASCII character written as a `\uXXXX` escape, as the categorization API
 * spec requires for Russian names; it parses back to the same strings. Characters outside the
 * BMP come out as their UTF-16 surrogate pair, which is what JSON defines.
 */
export function toAsciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
