export { createBuiltinWhitelist, BUILTIN_WHITELIST, PRODUCT_HOSTS } from './builtin.js'
export type { BuiltinWhitelist, WhitelistGroup } from './builtin.js'
