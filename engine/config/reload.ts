/**
 * What a config reload (SIGHUP, `filterd reload`) means for one role: which keys changed, which of
 * them the role reads (the schema's `x-roles`), which of those it applies live (`x-live`) and which
 * need a restart. The role keeps the old value of a restart key, so the config it runs with after
 * a reload is the old one with only the live keys replaced (`mergeLive`).
 */
import { configSchema } from './schema.js'
import type { Config, RoleName } from './types.js'

/** One key of the schema: who reads it and who applies a new value without a restart. */
export interface KeyUse {
  /** `section.key`, as the config file and docs/config.md spell it. */
  readonly key: string
  readonly roles: readonly RoleName[]
  readonly live: readonly RoleName[]
}

interface Annotated {
  'x-roles'?: readonly RoleName[]
  'x-live'?: readonly RoleName[]
  properties?: Record<string, Annotated>
}

/** Every key of the schema with its readers and live roles, in schema order. */
export function keyUses(): KeyUse[] {
  const out: KeyUse[] = []
  const sections = configSchema.properties as unknown as Record<string, Annotated>
  for (const [section, body] of Object.entries(sections)) {
    for (const [key, prop] of Object.entries(body.properties ?? {})) {
      out.push({
        key: `${section}.${key}`,
        roles: prop['x-roles'] ?? body['x-roles'] ?? [],
        live: prop['x-live'] ?? []
      })
    }
  }
  return out
}

const USES: ReadonlyMap<string, KeyUse> = new Map(keyUses().map((u) => [u.key, u]))

type Sections = Record<string, Record<string, unknown> | undefined>

/** The `section.key` names whose values differ between two loaded configs. */
export function changedKeys(old: Readonly<Config>, next: Readonly<Config>): string[] {
  const a = old as unknown as Sections
  const b = next as unknown as Sections
  const out: string[] = []
  for (const key of USES.keys()) {
    const [section, name] = key.split('.') as [string, string]
    if (JSON.stringify(a[section]?.[name]) !== JSON.stringify(b[section]?.[name])) out.push(key)
  }
  return out
}

export interface ReloadPlan {
  /** Changed keys this role reads and applies live. */
  readonly live: readonly string[]
  /** Changed keys this role reads but applies only at its next start. */
  readonly restart: readonly string[]
}

/** The changed keys `role` reads, split into those it applies live and those that need its restart. */
export function planReload(role: RoleName, old: Readonly<Config>, next: Readonly<Config>): ReloadPlan {
  const live: string[] = []
  const restart: string[] = []
  for (const key of changedKeys(old, next)) {
    const use = USES.get(key)!
    if (!use.roles.includes(role)) continue
    if (use.live.includes(role)) live.push(key)
    else restart.push(key)
  }
  return { live, restart }
}

/** `old` with the values of `keys` taken from `next`: the config a role runs with after applying them. */
export function mergeLive(old: Readonly<Config>, next: Readonly<Config>, keys: readonly string[]): Readonly<Config> {
  const merged = structuredClone(old) as unknown as Record<string, Record<string, unknown>>
  const from = next as unknown as Sections
  for (const key of keys) {
    const [section, name] = key.split('.') as [string, string]
    merged[section] ??= {}
    const value = from[section]?.[name]
    if (value === undefined) Reflect.deleteProperty(merged[section], name)
    else merged[section][name] = structuredClone(value)
  }
  return deepFreeze(merged) as unknown as Readonly<Config>
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}
