/**
 * Where each role and offline command lives. Modules are imported lazily, so `filterd api` does
 * not load the DNS engine, and a role that is not built yet is reported as such instead of
 * failing to start the CLI.
 */
import type { Config, RoleName } from '../../engine/config/index.js'
import type { StartRole } from '../../engine/role.js'

export const ROLE_NAMES: readonly RoleName[] = ['dns', 'blockpage', 'api', 'catapi', 'local', 'collector', 'sync']

export const ROLE_HELP: Record<RoleName, string> = {
  dns: 'filtering DNS server (proxy section)',
  blockpage: 'block page and front door to the management API (blockpage section)',
  api: 'management REST API and statistics reports (api section)',
  catapi: 'public categorization API, registered and anonymous listeners (catapi section)',
  local: 'local categorization service, as run in the container (local section)',
  collector: 'vendor side: usage reports and database updates (collector section)',
  sync: 'follows the shared Redis store into this host\'s LMDB replica (sync section; only with common.redis-ip)'
}

const ROLE_MODULES: Record<RoleName, string> = {
  dns: '../../dns/role.js',
  blockpage: '../../blockpage/role.js',
  api: '../../api/role.js',
  catapi: '../../catapi/role.js',
  local: '../../local/role.js',
  collector: '../../collector/role.js',
  sync: '../../sync/role.js'
}

/** The config section that holds a role's listen/log/pid keys. */
export function sectionOf (config: Readonly<Config>, role: RoleName): { log?: string, pid: string, 'log-level'?: string } {
  return role === 'dns' ? config.proxy : config[role]
}

export class NotBuiltError extends Error {}

async function importOptional (specifier: string, what: string): Promise<Record<string, unknown>> {
  try {
    return await import(new URL(specifier, import.meta.url).href) as Record<string, unknown>
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(specifier.split('/').pop() ?? '')) {
      throw new NotBuiltError(`${what} is not built yet`)
    }
    throw err
  }
}

export async function loadRole (role: RoleName): Promise<StartRole> {
  const mod = await importOptional(ROLE_MODULES[role], `the ${role} role`)
  if (typeof mod.startRole !== 'function') throw new NotBuiltError(`the ${role} role is not built yet`)
  return mod.startRole as StartRole
}

export async function isRoleBuilt (role: RoleName): Promise<boolean> {
  try {
    await loadRole(role)
    return true
  } catch (err) {
    if (err instanceof NotBuiltError) return false
    throw err
  }
}

/** Offline commands: `filterd <command> …` runs `run(argv)` of the module and exits with its code. */
export const COMMANDS: Record<string, { module: string, help: string }> = {
  'build-db': { module: '../../tools/build-db.js', help: 'compile the data files into the category database (--config FILE [--continue])' },
  import: { module: '../../tools/import/index.js', help: 'convert UT1/squidGuard, hosts, plain and AdBlock lists into a data file' },
  'stats-import': { module: '../../tools/stats-import.js', help: 'import every closed statistics file now (--config FILE)' },
  client: { module: '../../tools/client.js', help: 'manage categorization API clients: add|list|remove|rotate|usage (--config FILE)' },
  'collector-usage': { module: '../../tools/collector-usage.js', help: 'usage per key per day as the collector stored it (also: filterd collector usage)' }
}

export type CommandRun = (argv: string[]) => Promise<number>

export async function loadCommand (name: string): Promise<CommandRun> {
  const entry = COMMANDS[name]
  if (entry === undefined) throw new Error(`unknown command ${name}`)
  const mod = await importOptional(entry.module, `the ${name} command`)
  const run = mod.run ?? mod.runImport
  if (typeof run !== 'function') throw new NotBuiltError(`the ${name} command is not built yet`)
  return run as CommandRun
}
