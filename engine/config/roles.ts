/**
 * The roles `filterd <role>` starts, in the order `filterd all` starts them: the one list of them.
 * The config types, the schema's annotations, the loader, the CLI and the lint layering
 * (eslint.config.js, which transpiles this file, so it must import nothing) all derive from it.
 */
export const ROLE_NAMES = ['dns', 'blockpage', 'api', 'catapi', 'local', 'collector', 'sync', 'rpz'] as const

/** A role `filterd <role>` starts; each has a config section with its log/pid keys. */
export type RoleName = (typeof ROLE_NAMES)[number]

/** The config section that holds a role's keys: the DNS role's is `proxy`, every other role's is its name. */
export type RoleSection = Exclude<RoleName, 'dns'> | 'proxy'

export function roleSection(role: RoleName): RoleSection {
  return role === 'dns' ? 'proxy' : role
}

/** Every role's config section, in role order. */
export const ROLE_SECTIONS: readonly RoleSection[] = ROLE_NAMES.map(roleSection)
