/** The block page role's public surface (docs/conventions.md: folders reach into each other through index.ts). */
export {
  startBlockPage, createBlockPageHandler, createBlockPageDeps, hostOf, wantsPage,
  type BlockPageOptions, type BlockPageDeps, type RunningBlockPage, type FrontDoorLike
} from './server.js'
export { loadTemplates, DEFAULT_TEMPLATES_DIR, PAGE_NAMES, type PageName, type PageVars, type TemplateSet } from './templates.js'
export { pickLanguage } from './language.js'
export { safeSearchRedirect, engineOfHost, TERMS_PARAM, type SafeSearchAnswer } from './safesearch.js'
export { reasonText, type PageReason } from './messages.js'
export { startRole } from './role.js'
