export { createBuiltinWhitelist } from './builtin.js'
export type { BuiltinWhitelist, WhitelistGroup } from './builtin.js'
