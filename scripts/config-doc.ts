/**
 * Renders docs/config.md from the config schema's descriptions and defaults, so the reference
 * cannot drift from what the loader accepts (a test compares the file with this output;
 * `npm run gen:docs` rewrites it).
 */
import { configSchema } from '../engine/config/schema.js'
import { keyUses } from '../engine/config/reload.js'

interface Prop {
  type?: string
  enum?: readonly string[]
  default?: unknown
  description?: string
  items?: Prop
  minimum?: number
  maximum?: number
  maxItems?: number
  properties?: Record<string, Prop>
}

const INTRO: Record<string, string> = {
  dnscache: 'The recursive resolver(s) that receive unblocked queries.',
  proxy: 'The filtering DNS server (`filterd dns`).',
  datafiles: 'The category database sources (`filterd build-db`).',
  blockpage: 'The block page and the front door to the management API (`filterd blockpage`).',
  api: 'The management REST API (`filterd api`).',
  common: 'The store shared by every role on the host.',
  stats: 'The query log, its import and the usage report to the vendor.',
  catapi: 'The public categorization API (`filterd catapi`).',
  local: 'The local categorization service run in the container (`filterd local`).',
  demo: 'Quick start only (`npm start`); leave it out in production.',
  collector: 'The vendor side: usage reports and database updates (`filterd collector`).',
  sync: 'The replica follower (`filterd sync`), run only with a shared Redis store (docs/operations-redis.md).',
  rpz: 'RPZ out (`filterd rpz`): the policy as response-policy zones over AXFR/IXFR for BIND, Unbound and PowerDNS Recursor (docs/rpz.md).'
}

function typeOf(p: Prop): string {
  if (p.enum !== undefined) return p.enum.map((v) => `\`${v}\``).join(' \\| ')
  if (p.type === 'array') return `list of ${p.items?.type ?? 'values'}`
  return p.type ?? ''
}

function fmt(v: unknown): string {
  if (v === undefined) return ''
  return `\`${JSON.stringify(v)}\``
}

export function renderConfigDoc(): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- generated from engine/config/schema.ts by `npm run gen:docs`; do not edit by hand -->',
    '',
    'One YAML file configures every role. `filterd check-config --config FILE` validates it and prints one line',
    '(`config OK: 8 roles, N listeners`); with `--json` it prints the config with every default filled in. Rules',
    'beyond the types below, each reported with the key it concerns:',
    '',
    '- keys the spec lets repeat (`proxy.listen`, `proxy.blockpage-ip`, `dnscache.forward`, `datafiles.file`) are',
    '  YAML lists; a single value is read as a one-element list (YAML itself forbids a repeated key);',
    '- `proxy.blockpage-ip` holds at most two addresses, at most one per IP version;',
    '- `check-config` also checks that the files and folders the config refers to exist and are readable by the',
    '  user running it: `datafiles.path`, `datafiles.cats` (with its catgroups.json), the `datafiles.file` entries the',
    '  file lists, `blockpage.templates`, `blockpage.tls-cert`, `blockpage.tls-key`, `proxy.safesearch-hosts` and',
    '  `stats.vendor-key`, each when its section is written in the file; state folders the roles create themselves',
    "  (`common.db`, `stats.dir`, …) are not checked, but every role's `log` and `pid` folder must be writable, or",
    '  creatable, by that user (the systemd unit runs check-config as `filterd` before each start);',
    '- every `log` is an absolute path or `-` (standard output); every `pid` is an absolute path;',
    '- no two HTTP listeners (`api.listen`, `blockpage.listen`, `blockpage.tls-listen`, `catapi.listen`, `catapi.anon-listen`, and `local.listen` and `collector.listen` when the file has those sections) may share a port on an overlapping address;',
    '- addresses are `address:port`, IPv6 in brackets (`[::1]:53`); resolvers default to port 53;',
    '- `${CONFIG_DIR}` expands to the folder of the config file and `${NAME}` to an environment variable',
    "  (refused when unset); other relative paths are read relative to the config file's folder;",
    '- unknown keys are refused, so a typo never silently falls back to a default.',
    '',
    'The spec fixes `proxy.pid`, `datafiles.path` and `datafiles.file`. filterd keeps them configurable (the quick',
    "start and the tests run unprivileged, each in its own folder); their defaults are the spec's values, and",
    '`conf/filterd.example.yaml` keeps them for production. Why: docs/architecture.md.',
    '',
    'A changed file takes effect when the daemons are restarted, or, for the keys whose "reload" column says',
    '"live", when the roles reading them get SIGHUP (`filterd reload --config FILE`, `systemctl reload',
    'filterd@ROLE`): each role logs one line naming the keys it applied and those that need its restart, which',
    'it keeps at their old value; a file that does not load is refused, naming the key (docs/install.md,',
    '"Changing the config"). "read by" names the roles that read a key; a section\'s keys are read by its',
    'role unless the column says otherwise.',
    ''
  ]
  const uses = new Map(keyUses().map((u) => [u.key, u]))
  const reload = (key: string): string => {
    const u = uses.get(key)
    if (u === undefined || u.roles.length === 0) return '-'
    if (u.live.length === 0) return 'restart'
    const rest = u.roles.filter((r) => !u.live.includes(r))
    return rest.length === 0 ? 'live' : `live (${u.live.join(', ')}); restart (${rest.join(', ')})`
  }
  const readers = (key: string): string => {
    const roles = uses.get(key)?.roles ?? []
    if (roles.length === 0) return key.startsWith('demo.') ? '`filterd all`' : '-'
    return roles.length === 7 ? 'all' : roles.join(', ')
  }
  const sections = configSchema.properties as unknown as Record<string, Prop>
  for (const [name, section] of Object.entries(sections)) {
    lines.push(
      `## \`${name}\``,
      '',
      INTRO[name] ?? '',
      '',
      '| key | type | default | read by | reload | meaning |',
      '|---|---|---|---|---|---|'
    )
    for (const [key, p] of Object.entries(section.properties ?? {})) {
      const limits: string[] = []
      if (p.minimum !== undefined) limits.push(`min ${p.minimum}`)
      if (p.maximum !== undefined) limits.push(`max ${p.maximum}`)
      if (p.maxItems !== undefined) limits.push(`at most ${p.maxItems} items`)
      const meaning = [p.description ?? '', limits.length > 0 ? `(${limits.join(', ')})` : '']
        .filter((s) => s !== '')
        .join(' ')
      lines.push(
        `| \`${name}.${key}\` | ${typeOf(p)} | ${fmt(p.default)} | ${readers(`${name}.${key}`)} | ${reload(`${name}.${key}`)} | ${meaning.replace(/\|/g, '\\|')} |`
      )
    }
    lines.push('')
  }
  return lines.join('\n')
}
