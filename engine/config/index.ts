export type { Config, HostPort, Language, LogLevel, RoleName } from './types.js'
export { checkConfigFile, loadConfigFile, parseConfig } from './load.js'
export { parseHostPort, formatHostPort } from './address.js'
export { configSchema } from './schema.js'
