export {
  loadTaxonomy, parseCategoryGroups, parseCategoryMeta,
  CATGROUPS_FILE, CATEGORY_META_FILE, MAX_CATEGORY
} from './taxonomy.js'
export type {
  Taxonomy, TaxonomyLanguage, CategoryGroups, CategoryGroupRecord, CategoryMeta, CategoryMetaMap
} from './taxonomy.js'
export { CATEGORY } from './well-known.js'
export type { WellKnownCategory } from './well-known.js'
