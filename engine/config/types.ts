/**
 * The validated configuration, as every role reads it. Hand-written to mirror schema.ts; the
 * loader fills defaults, so every key without `?` is always present. Key names keep the spec's
 * spelling (`blockpage-ip`, `redis-ip`) so the file and the code say the same thing.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'
export type Language = 'ru' | 'en'

export interface Config {
  /** Absolute path of the file this config was read from ('' for the embedded default). */
  readonly source: string
  readonly dnscache: { readonly forward: readonly string[] }
  readonly proxy: {
    readonly listen: readonly string[]
    readonly 'blockpage-ip': readonly string[]
    readonly log: string
    readonly pid: string
    readonly ttl: number
    readonly dispatch: 'inline' | 'pool'
    readonly io: 'auto' | 'native' | 'dgram'
    readonly processes: number
    readonly workers: number
    readonly 'batch-size': number
    readonly 'client-subnet': boolean
    readonly 'upstream-timeout': number
    readonly 'tcp-idle-timeout': number
    readonly 'tcp-max-connections': number
    readonly 'safesearch-hosts'?: string
    readonly 'log-level'?: LogLevel
  }
  readonly datafiles: {
    readonly path: string
    readonly file: readonly string[]
    readonly cats: string
    readonly language: Language
  }
  readonly blockpage: {
    readonly listen: string
    readonly templates: string
    readonly log: string
    readonly pid: string
    readonly language?: Language
    readonly 'accept-language': boolean
    readonly 'product-name': string
    readonly 'tls-listen'?: string
    readonly 'tls-cert'?: string
    readonly 'tls-key'?: string
    readonly 'log-level'?: LogLevel
  }
  readonly api: {
    readonly listen: string
    readonly log: string
    readonly pid: string
    readonly host: string
    readonly access: readonly string[]
    readonly 'trusted-proxies': readonly string[]
    readonly 'body-limit': number
    readonly 'log-level'?: LogLevel
  }
  readonly common: {
    readonly db: string
    readonly 'redis-ip'?: string
    readonly 'redis-port'?: number
    readonly 'redis-password'?: string
    readonly 'redis-prefix'?: string
    readonly 'redis-stream-length'?: number
    readonly 'redis-sentinels'?: readonly string[]
    readonly 'redis-master-name'?: string
    readonly 'host-id'?: string
    readonly 'vendor-names': readonly string[]
    readonly safesearchredirect: string
    readonly 'log-level': LogLevel
    readonly 'http-server': 'auto' | 'uws' | 'node'
  }
  readonly stats: {
    readonly enabled: boolean
    readonly dir: string
    readonly db: string
    readonly rotate: number
    readonly 'max-file-size': number
    readonly 'import-interval': number
    readonly timezone: string
    readonly 'vendor-url'?: string
    readonly 'vendor-key'?: string
    readonly 'vendor-interval': number
  }
  readonly catapi: {
    readonly listen: string
    readonly 'anon-listen': string
    readonly 'anon-limit': number
    readonly resolver?: readonly string[]
    readonly language?: Language
    readonly log: string
    readonly pid: string
    readonly 'log-level'?: LogLevel
  }
  readonly local: {
    readonly listen: string
    readonly key: string
    readonly 'collector-url': string
    readonly 'report-interval': number
    readonly 'update-interval': number
    readonly db: string
    readonly language: Language
    readonly pid: string
    readonly 'log-level'?: LogLevel
  }
  readonly demo?: {
    readonly upstream?: string
    readonly 'build-db': boolean
    readonly 'default-filter'?: readonly number[]
  }
  readonly collector: {
    readonly listen: string
    readonly db: string
    readonly snapshots: string
    readonly keys: readonly string[]
    readonly log: string
    readonly pid: string
    readonly 'log-level'?: LogLevel
  }
  readonly sync: {
    readonly listen: string
    readonly log: string
    readonly pid: string
    readonly 'apply-timeout': number
    readonly 'log-level'?: LogLevel
  }
}

/** The roles `filterd <role>` starts; each has a section with its log/pid keys. */
export type RoleName = 'dns' | 'blockpage' | 'api' | 'catapi' | 'local' | 'collector' | 'sync'

/** A parsed `address:port`. `family` is 4 or 6. */
export interface HostPort {
  readonly host: string
  readonly port: number
  readonly family: 4 | 6
}
