/**
 * Where each role and offline command lives. Modules are imported lazily, so `filterd api` does
 * not load the DNS engine.
 */
import { roleSection, type Config, type RoleName } from '../../engine/config/index.js'
import type { StartRole } from '../../engine/role.js'

export { ROLE_NAMES } from '../../engine/config/index.js'

export const ROLE_HELP: Record<RoleName, string> = {
  dns: 'filtering DNS server (proxy section)',
  blockpage: 'block page and front door to the management API (blockpage section)',
  api: 'management REST API and statistics reports (api section)',
  catapi: 'public categorization API, registered and anonymous listeners (catapi section)',
  local: 'local categorization service, as run in the container (local section)',
  collector: 'vendor side: usage reports and database updates (collector section)',
  sync: "follows the shared Redis store into this host's LMDB replica (sync section; only with common.redis-ip)",
  rpz: 'serves the policy as RPZ zones over AXFR/IXFR to other resolvers (rpz section; only with rpz.enabled)'
}

const ROLE_MODULES: Record<RoleName, string> = {
  dns: '../../dns/role.js',
  blockpage: '../../blockpage/role.js',
  api: '../../api/role.js',
  catapi: '../../catapi/role.js',
  local: '../../local/role.js',
  collector: '../../collector/role.js',
  sync: '../../sync/role.js',
  rpz: '../../rpz/role.js'
}

/** The config section that holds a role's listen/log/pid keys. */
export function sectionOf(
  config: Readonly<Config>,
  role: RoleName
): { log?: string; pid: string; 'log-level'?: string } {
  return config[roleSection(role)]
}

async function importModule(specifier: string): Promise<Record<string, unknown>> {
  return (await import(new URL(specifier, import.meta.url).href)) as Record<string, unknown>
}

export async function loadRole(role: RoleName): Promise<StartRole> {
  const mod = await importModule(ROLE_MODULES[role])
  if (typeof mod.startRole !== 'function') throw new Error(`${ROLE_MODULES[role]} exports no startRole`)
  return mod.startRole as StartRole
}

/**
 * Offline commands: `filterd <command> …` runs `run(argv)` of the module and exits with its code.
 * `ownHelp`: the module prints its own usage for --help.
 */
export const COMMANDS: Record<string, { module: string; help: string; ownHelp?: true }> = {
  'build-db': {
    module: '../../tools/build-db.js',
    help: 'compile the data files into the category database (--config FILE [--continue])'
  },
  import: {
    module: '../../tools/import/index.js',
    help: 'convert UT1/squidGuard, hosts, plain and AdBlock lists into a data file'
  },
  'stats-import': {
    module: '../../tools/stats-import.js',
    help: 'import every closed statistics file now (--config FILE)'
  },
  'stats-migrate': {
    module: '../../tools/stats-migrate.js',
    help: 'move an old LMDB statistics environment (stats.db/data.mdb) into the statistics store, api role stopped (--config FILE)'
  },
  client: {
    module: '../../tools/client.js',
    help: 'manage categorization API clients: add|list|remove|rotate|usage (--config FILE)'
  },
  'api-client': {
    module: '../../tools/api-client.js',
    help: 'manage management API clients (Bearer token or HTTP Basic): add|list|remove (--config FILE)',
    ownHelp: true
  },
  'redis-seed': {
    module: '../../tools/redis-seed.js',
    help: "re-create the shared Redis store from this host's replica after Redis lost its data (--config FILE [--force | --adopt]); --detach: make this host's store its own again"
  },
  backup: {
    module: '../../tools/backup/backup.js',
    help: 'hot copy of the store and statistics into a new folder, while the roles run (--config FILE DIR)',
    ownHelp: true
  },
  restore: {
    module: '../../tools/backup/restore.js',
    help: 'put a backup back, roles stopped (--config FILE [--force] DIR)',
    ownHelp: true
  },
  reload: {
    module: '../../tools/cli/reload.js',
    help: 'make the running roles read the config again (SIGHUP): live keys applied, the rest named (--config FILE [--role ROLE])',
    ownHelp: true
  },
  status: {
    module: '../../tools/cli/status.js',
    help: 'each role of this config: pid, up since, listeners, health, store generation, replica, last statistics import; exit 0 when all are healthy (--config FILE [--json])',
    ownHelp: true
  },
  'collector-usage': {
    module: '../../tools/collector-usage.js',
    help: 'usage per key per day as the collector stored it (also: filterd collector usage)'
  }
}

export type CommandRun = (argv: string[]) => Promise<number>

export async function loadCommand(name: string): Promise<CommandRun> {
  const entry = COMMANDS[name]
  if (entry === undefined) throw new Error(`unknown command ${name}`)
  const mod = await importModule(entry.module)
  const run = mod.run ?? mod.runImport
  if (typeof run !== 'function') throw new Error(`${entry.module} exports no run`)
  return run as CommandRun
}
