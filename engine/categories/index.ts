export { loadTaxonomy, MAX_CATEGORY, CATEGORY_META_FILE, CATGROUPS_FILE } from './taxonomy.js'
export type {
  Taxonomy,
  TaxonomyLanguage,
  CategoryGroups,
  CategoryGroupRecord,
  CategoryMeta,
  CategoryMetaMap
} from './taxonomy.js'
export { CATEGORY } from './well-known.js'
export type { WellKnownCategory } from './well-known.js'
