/**
 * Config load path (fastify's initial-config-validation, adapted): read YAML → expand
 * `${CONFIG_DIR}` and `${ENV}` references → read scalars of repeatable keys as lists → ajv
 * (defaults filled, every error collected) → the spec's cross-key rules → paths resolved →
 * deep-frozen `Config`. Every failure names the key, as `conf/x.yaml: proxy.blockpage-ip: …`,
 * and all of them are reported at once inside one ENGINE_CONFIG_INVALID error.
 */
import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { Ajv, type ErrorObject } from 'ajv'
import { parseDocument } from 'yaml'
import { EngineError } from '../errors.js'
import { compileApiNetwork, ipBytes } from '../net/index.js'
import { parseHostPort } from './address.js'
import { checkEncryptedDns, encryptedListenerCount } from './encrypted-dns.js'
import { checkReferencedPaths, checkRoleFolders } from './paths.js'
import { ROLE_SECTIONS } from './roles.js'
import { configSchema } from './schema.js'
import { sharesRedis } from './shared-store.js'
import type { Config, ConfigFile, HostPort } from './types.js'

/** Keys the spec lets repeat: a scalar there is a one-element list. */
const LIST_KEYS: ReadonlyArray<[string, string]> = [
  ['dnscache', 'forward'],
  ['proxy', 'listen'],
  ['proxy', 'blockpage-ip'],
  ['datafiles', 'file'],
  ['catapi', 'resolver'],
  ['api', 'access'],
  ['api', 'allowed-origins'],
  ['collector', 'keys'],
  ['common', 'vendor-names']
]

/** Path keys resolved against the config file's folder when relative (log and pid must be absolute). */
const PATH_KEYS: ReadonlyArray<[string, string]> = [
  ['datafiles', 'path'],
  ['datafiles', 'cats'],
  ['blockpage', 'templates'],
  ['blockpage', 'tls-cert'],
  ['blockpage', 'tls-key'],
  ['common', 'db'],
  ['stats', 'dir'],
  ['stats', 'db'],
  ['stats', 'vendor-key'],
  ['local', 'db'],
  ['collector', 'db'],
  ['collector', 'snapshots'],
  ['proxy', 'safesearch-hosts']
]

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, allowUnionTypes: true })
// Who reads a key and who reloads it live (engine/config/reload.ts): annotations, not rules.
ajv.addKeyword('x-roles')
ajv.addKeyword('x-live')
const validate = ajv.compile<ConfigFile>(configSchema)

type Json = Record<string, unknown>

/**
 * A feature's own checks of a validated config (its problems, each naming its key). The loader runs
 * the ones it is given: the config core knows no feature; engine/features.ts lists them all.
 */
export type FeatureCheck = (config: Readonly<Config>) => readonly string[]

/** Reads, validates and freezes the config file at `file`. */
export function loadConfigFile(
  file: string,
  checks: readonly FeatureCheck[],
  env: NodeJS.ProcessEnv = process.env
): Readonly<Config> {
  const path = resolve(file)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new EngineError('ENGINE_CONFIG_READ', `cannot read config ${path}: ${(err as Error).message}`, { cause: err })
  }
  return parseConfig(text, path, checks, env)
}

/**
 * `filterd check-config`: `loadConfigFile`, then the files and folders the config refers to and
 * the roles' log and pid folders (engine/config/paths.ts), every problem naming its key, all in one
 * ENGINE_CONFIG_INVALID.
 */
export function checkConfigFile(
  file: string,
  checks: readonly FeatureCheck[],
  env: NodeJS.ProcessEnv = process.env
): Readonly<Config> {
  const config = loadConfigFile(file, checks, env)
  const raw: unknown = parseDocument(readFileSync(config.source, 'utf8')).toJS() ?? {}
  const written = new Set<string>()
  if (isObject(raw)) {
    for (const [section, body] of Object.entries(raw)) {
      written.add(section)
      if (isObject(body)) for (const key of Object.keys(body)) written.add(`${section}.${key}`)
    }
  }
  const problems = [...checkReferencedPaths(config, written), ...checkRoleFolders(config)]
  if (problems.length > 0) throw invalid(config.source, problems)
  return config
}

/** Validates config text; `path` names the file in messages and anchors relative paths. */
export function parseConfig(
  text: string,
  path: string,
  checks: readonly FeatureCheck[],
  env: NodeJS.ProcessEnv = process.env
): Readonly<Config> {
  const problems: string[] = []
  const doc = parseDocument(text, { uniqueKeys: true })
  if (doc.errors.length > 0) {
    throw invalid(
      path,
      doc.errors.map((e) => `line ${e.linePos?.[0].line ?? '?'}: ${e.message.split('\n')[0]}`)
    )
  }
  const raw: unknown = doc.toJS() ?? {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid(path, ['the file must hold a mapping of sections'])
  const configDir = dirname(path)
  const written = new Set(Object.keys(raw))
  const expanded = expand(raw, '', configDir, env, problems) as Json
  if (problems.length > 0) throw invalid(path, problems)
  for (const [section, key] of LIST_KEYS) {
    const s = expanded[section]
    if (isObject(s) && s[key] !== undefined && !Array.isArray(s[key])) s[key] = [s[key]]
  }
  if (!validate(expanded)) throw invalid(path, (validate.errors ?? []).map(describe), validate.errors)
  const config: Config & Json = Object.assign(expanded, { source: path })
  checkRules(config, problems, written)
  for (const check of checks) problems.push(...check(config))
  if (problems.length > 0) throw invalid(path, problems)
  for (const [section, key] of PATH_KEYS) {
    const s = config[section] as Json
    if (typeof s[key] === 'string') s[key] = resolve(configDir, s[key])
  }
  // A feed's zone file, like the other paths, is relative to the config file.
  for (const feed of (config['rpz-feeds'] as Json).feeds as Json[])
    if (typeof feed.file === 'string') feed.file = resolve(configDir, feed.file)
  for (const section of ROLE_SECTIONS) {
    const s = config[section] as Json
    for (const key of ['log', 'pid']) if (typeof s[key] === 'string' && isAbsolute(s[key])) s[key] = resolve(s[key])
  }
  return deepFreeze(config)
}

/** Every listener the config's roles open (DNS addresses and HTTP ones), for check-config's summary. */
export function listenerCount(config: Readonly<Config>): number {
  let n = config.proxy.listen.length + encryptedListenerCount(config.proxy)
  for (const [section, key] of HTTP_LISTENERS)
    if (typeof (config[section] as Record<string, unknown>)[key] === 'string') n++
  return n
}

const HTTP_LISTENERS = [
  ['proxy', 'metrics-listen'],
  ['api', 'listen'],
  ['blockpage', 'listen'],
  ['blockpage', 'tls-listen'],
  ['catapi', 'listen'],
  ['catapi', 'anon-listen'],
  ['local', 'listen'],
  ['collector', 'listen'],
  ['sync', 'listen']
] as const

/** The spec's rules that a schema cannot say; `written` holds the sections the file itself has. */
function checkRules(config: Config, problems: string[], written: ReadonlySet<string>): void {
  config.dnscache.forward.forEach((a, i) => checkAddress(`dnscache.forward[${i}]`, a, problems, 53))
  config.proxy.listen.forEach((a, i) => checkAddress(`proxy.listen[${i}]`, a, problems, 53))
  checkEncryptedDns(config.proxy, problems)
  const families = new Map<number, string>()
  config.proxy['blockpage-ip'].forEach((ip, i) => {
    const bytes = ipBytes(ip)
    if (bytes === undefined) {
      problems.push(`proxy.blockpage-ip[${i}]: "${ip}" is not an IP address`)
      return
    }
    const family = bytes.length === 4 ? 4 : 6
    const other = families.get(family)
    if (other !== undefined)
      problems.push(
        `proxy.blockpage-ip[${i}]: a second IPv${family} address (${other} is already set); at most one per IP version`
      )
    families.set(family, ip)
  })
  for (const section of ROLE_SECTIONS) {
    const s = config[section] as { log?: string; pid: string; listen: string | readonly string[] }
    if (s.log !== undefined && s.log !== '-' && !isAbsolute(s.log))
      problems.push(`${section}.log: must be an absolute path or - (got "${s.log}")`)
    if (!isAbsolute(s.pid)) problems.push(`${section}.pid: must be an absolute path (got "${s.pid}")`)
  }
  for (const [section, key] of HTTP_LISTENERS) {
    const value = (config[section] as Record<string, unknown>)[key]
    if (typeof value === 'string') checkAddress(`${section}.${key}`, value, problems)
  }
  config.catapi.resolver?.forEach((a, i) => checkAddress(`catapi.resolver[${i}]`, a, problems, 53))
  // Two HTTP listeners on one port of one address: the second role to start would fail to bind. The
  // blockpage and api listeners (the front door and what it forwards to) are checked against each other,
  // defaults included; the others only against sections the file itself has, since a role's defaults
  // are for the machine it usually runs on (the container's local service is on port 80 like a block
  // page it never runs with; catapi's 8081 may be taken by an API on a host catapi does not run on).
  const listeners: Array<{ name: string; hp: HostPort; isp: boolean; written: boolean }> = []
  for (const [section, key] of HTTP_LISTENERS) {
    const value = (config[section] as Record<string, unknown>)[key]
    if (typeof value !== 'string') continue
    const hp = safeHostPort(value)
    if (hp === undefined) continue
    const me = {
      name: `${section}.${key}`,
      hp,
      isp: section === 'api' || section === 'blockpage',
      written: written.has(section)
    }
    const clash = listeners.find((o) => ((o.isp && me.isp) || (o.written && me.written)) && overlaps(hp, o.hp))
    if (clash !== undefined) {
      problems.push(
        `${me.name}: must differ from ${clash.name} (both listen on ${value}); two roles cannot share a port of one address`
      )
    }
    listeners.push(me)
  }
  const tls = config.blockpage['tls-listen']
  if (tls !== undefined && (config.blockpage['tls-cert'] === undefined || config.blockpage['tls-key'] === undefined)) {
    problems.push('blockpage.tls-listen: needs blockpage.tls-cert and blockpage.tls-key')
  }
  // Compiled once here and kept for the front door and the api role (engine/net/api-network.ts).
  problems.push(...compileApiNetwork(config.api).problems)
  if (config.common['redis-ip'] !== undefined && ipBytes(config.common['redis-ip']) === undefined) {
    problems.push(`common.redis-ip: "${config.common['redis-ip']}" is not an IP address`)
  }
  if (config.common['redis-port'] !== undefined && !sharesRedis(config)) {
    problems.push('common.redis-port: needs common.redis-ip')
  }
  if (!isValidTimeZone(config.stats.timezone))
    problems.push(`stats.timezone: unknown time zone "${config.stats.timezone}"`)
}

function checkAddress(key: string, value: string, problems: string[], defaultPort?: number): void {
  try {
    parseHostPort(value, defaultPort)
  } catch (err) {
    problems.push(`${key}: ${(err as Error).message}`)
  }
}

function safeHostPort(value: string): HostPort | undefined {
  try {
    return parseHostPort(value)
  } catch {
    return undefined
  }
}

/** Two listeners collide when the ports match and one address covers the other. */
function overlaps(a: HostPort, b: HostPort): boolean {
  if (a.port !== b.port || a.port === 0) return false
  const wildcard = (h: HostPort): boolean => h.host === '0.0.0.0' || h.host === '::'
  return a.host === b.host || wildcard(a) || wildcard(b)
}

function isValidTimeZone(tz: string): boolean {
  try {
    Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

/** Replaces `${CONFIG_DIR}` and `${NAME}` (environment) in every string value. */
function expand(value: unknown, key: string, configDir: string, env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      if (name === 'CONFIG_DIR') return configDir
      const v = env[name]
      if (v === undefined) {
        problems.push(`${key}: environment variable ${name} is not set`)
        return ''
      }
      return v
    })
  }
  if (Array.isArray(value)) return value.map((v, i) => expand(v, `${key}[${i}]`, configDir, env, problems))
  if (isObject(value)) {
    const out: Json = {}
    for (const [k, v] of Object.entries(value))
      out[k] = expand(v, key === '' ? k : `${key}.${k}`, configDir, env, problems)
    return out
  }
  return value
}

/** `/proxy/blockpage-ip` + ajv's words → `proxy.blockpage-ip: must NOT have more than 2 items`. */
function describe(e: ErrorObject): string {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  let key = ''
  for (const p of parts) key += /^\d+$/.test(p) ? `[${p}]` : key === '' ? p : `.${p}`
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty
    return `${key === '' ? extra : `${key}.${extra}`}: unknown key`
  }
  if (e.keyword === 'enum') {
    return `${key}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  }
  return `${key === '' ? '(top level)' : key}: ${e.message ?? 'is invalid'}`
}

function invalid(path: string, lines: string[], cause?: unknown): EngineError {
  return new EngineError(
    'ENGINE_CONFIG_INVALID',
    `invalid config ${path}:\n${lines.map((l) => `  ${path}: ${l}`).join('\n')}`,
    cause === undefined ? undefined : { cause }
  )
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}
