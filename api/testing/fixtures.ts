/**
 * Test and benchmark helpers for the management API (not a test file itself): a small taxonomy written to a
 * temp dir, a config built through the real loader, an in-process API server on port 0, and a JSON client.
 */
import { startFeedTransfers, storedFeedsFromConfig } from '../../engine/rpz-feeds/feed-set.js'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'
import { type Config, type LogLevel } from '../../engine/config/index.js'
import { parseConfig } from '../../engine/features.js'
import { loadTaxonomy, type Taxonomy } from '../../engine/categories/index.js'
import { CategoryDb } from '../../engine/catdb/index.js'
import type { HttpImpl } from '../../engine/http/index.js'
import { openStatsDb, type StatsDb } from '../../engine/stats/index.js'
import { openConfiguredStore, type Store } from '../../engine/store/index.js'
import { bearerToken, clientRecord, newSecret } from '../../engine/auth/index.js'
import { createApiServer, type ApiServer } from '../server.js'

export const GROUPS_EN = [
  { 'Adult content': { 1: 'Pornography', 2: 'Erotica and nudity' } },
  { Social: { 40: 'Social networks', 41: 'Dating' } },
  { Service: { 0: 'Non-Existing Domain' } }
]
export const GROUPS_RU = [
  { 'Для взрослых': { 1: 'Порнография', 2: 'Эротика' } },
  { Общение: { 40: 'Социальные сети', 41: 'Знакомства' } },
  { Служебные: { 0: 'Несуществующий домен' } }
]

/** A temp dir removed when `cleanup` runs. */
import { makeTempDir } from '../../engine/testing/temp.js'

export const tempDir = makeTempDir

/** Writes catgroups.json, catgroups_en.json and categories.meta.json into `dir`. */
export function writeTaxonomy(dir: string): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'catgroups_en.json'), JSON.stringify(GROUPS_EN))
  writeFileSync(join(dir, 'catgroups.json'), JSON.stringify(GROUPS_RU))
  const meta: Record<string, { bad: boolean }> = {}
  for (const n of [0, 1, 2, 40, 41]) meta[String(n)] = { bad: n === 1 || n === 2 }
  writeFileSync(join(dir, 'categories.meta.json'), JSON.stringify({ categories: meta }))
}

/** A full config through the real loader (defaults filled); `yaml` is the file text. */
export function configFrom(dir: string, yaml: string): Readonly<Config> {
  return parseConfig(yaml, join(dir, 'filterd.yaml'))
}

/** A logger that keeps its lines in memory, for asserting what was logged. */
export function memoryLogger(level: LogLevel = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n'))
        if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
      cb()
    }
  })
  return { logger: pino({ level }, sink), lines }
}

export interface StartedApi {
  api: ApiServer
  store: Store
  taxonomy: Taxonomy
  categories: CategoryDb
  config: Readonly<Config>
  port: number
  base: string
  dir: string
  lines: Array<Record<string, unknown>>
  close(): Promise<void>
}

export interface StartOptions {
  impl?: 'auto' | HttpImpl
  /** Extra lines of the `api:` section. */
  apiYaml?: string
  /** Extra top-level lines of the config (other sections). */
  configYaml?: string
  language?: 'en' | 'ru'
  /** The statistics reports' database; default: an empty one in the temp dir. */
  stats?: { db: StatsDb; timezone: string; now?: () => number }
  /** The live query log's folder and limits (default: the config's stats.dir). */
  liveLog?: Parameters<typeof createApiServer>[0]['liveLog']
  /** Wraps the store the server sees (fault injection). */
  wrapStore?: (s: Store) => Store
  /** The level of the server's logger, as api.log-level sets it (default info). */
  logLevel?: LogLevel
}

/** Starts an API server on 127.0.0.1:0 with a fresh store and taxonomy in a temp dir. */
export async function startApi(options: StartOptions = {}): Promise<StartedApi> {
  const { dir, cleanup } = tempDir('filterd-api-')
  writeTaxonomy(join(dir, 'cats'))
  const config = configFrom(
    dir,
    [
      'datafiles:',
      `  cats: ${join(dir, 'cats')}`,
      `  language: ${options.language ?? 'en'}`,
      'common:',
      `  db: ${join(dir, 'db')}`,
      'api:',
      '  listen: 127.0.0.1:0',
      ...(options.apiYaml === undefined ? [] : options.apiYaml.split('\n').map((l) => '  ' + l)),
      ...(options.configYaml === undefined ? [] : [options.configYaml])
    ].join('\n')
  )
  const store = openConfiguredStore(config)
  const taxonomy = loadTaxonomy(config.datafiles.cats, config.datafiles.language)
  const categories = new CategoryDb(store)
  const { logger, lines } = memoryLogger(options.logLevel)
  const served = options.wrapStore === undefined ? store : options.wrapStore(store)
  const ownStats = options.stats === undefined ? openStatsDb(join(dir, 'statsdb')) : undefined
  const stats = options.stats ?? { db: ownStats!, timezone: 'UTC' } // ownStats is set when options.stats is not
  // The feeds of `rpz-feeds` (none unless configYaml sets some), followed into the store as the host's
  // dns role does, and read from there as the api role does.
  const transfers = await startFeedTransfers(config, store, logger)
  const api = createApiServer({
    feeds: storedFeedsFromConfig(config, store),
    store: served,
    taxonomy,
    taxonomyDir: config.datafiles.cats,
    categories,
    config,
    logger,
    impl: options.impl ?? 'auto',
    stats,
    ...(options.liveLog === undefined ? {} : { liveLog: options.liveLog })
  })
  const { port } = await api.listen('127.0.0.1', 0)
  return {
    api,
    store,
    taxonomy,
    categories,
    config,
    port,
    base: `http://127.0.0.1:${port}`,
    dir,
    lines,
    async close() {
      await api.close()
      transfers?.close()
      await ownStats?.close()
      await store.close()
      cleanup()
    }
  }
}

export interface Answer<Body = unknown> {
  status: number
  headers: Headers
  text: string
  /** The body parsed as JSON, `undefined` when empty (not checked against `Body`: a test's own reading of it). */
  body: Body
}

/**
 * One request; a non-string body is sent as JSON. A POST, PUT or PATCH and any request with a body say
 * `Content-Type: application/json`, as the API requires of writes, unless `headers` names another.
 */
export async function call<Body = unknown>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<Answer<Body>> {
  const json = body !== undefined || method === 'POST' || method === 'PUT' || method === 'PATCH'
  const init: RequestInit = { method, headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers } }
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body)
  const res = await fetch(base + path, init)
  const text = await res.text()
  // Only JSON is parsed: the API also serves YAML (GET /openapi.yaml).
  const isJson = /json/.test(res.headers.get('content-type') ?? 'application/json')
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: (text === '' || !isJson ? undefined : JSON.parse(text)) as Body
  }
}

/**
 * Headers of a request as the front door relays it for a client at `address` (X-Filterd-Client,
 * blockpage/front-door.ts), so a test on one host can stand for a caller from outside.
 */
export function relayedFrom(address: string, headers: Record<string, string> = {}): Record<string, string> {
  return { 'x-filterd-client': address, ...headers }
}

/** Adds a management API client to the store (what `filterd api-client add` does); answers its credentials. */
export async function addApiClient(
  store: Store,
  id: string
): Promise<{ id: string; secret: string; bearer: string; basic: string }> {
  const secret = newSecret()
  const record = await clientRecord(id, secret, new Date().toISOString(), undefined)
  await store.write((w) => {
    w.putApiClient(record)
  })
  return {
    id,
    secret,
    bearer: `Bearer ${bearerToken(id, secret)}`,
    basic: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
  }
}

/** The `error` member of an error body, asserting its shape. */
export function errorOf(a: Answer): { code: string; message: string; field?: string } {
  const e = (a.body as { error?: { code: string; message: string; field?: string } } | undefined)?.error
  if (e === undefined || typeof e.code !== 'string' || typeof e.message !== 'string') {
    throw new Error(`expected an error body, got ${a.status} ${a.text}`)
  }
  return e
}

/**
 * The config file of a lone api role in `dir` (its taxonomy written there too), on its own policy
 * store and statistics store: the default paths are the host's, and DuckDB lets one process open a
 * store. `db` moves the policy store (a small file system); `stats` and `api` add lines to their sections.
 */
export function writeApiRoleConfig(
  dir: string,
  options: {
    db?: string
    logLevel?: string
    listen?: string
    pid?: string
    stats?: readonly string[]
    api?: readonly string[]
  } = {}
): string {
  writeTaxonomy(join(dir, 'cats'))
  const file = join(dir, 'filterd.yaml')
  writeFileSync(
    file,
    [
      'datafiles:',
      `  cats: ${join(dir, 'cats')}`,
      '  language: en',
      'common:',
      `  db: ${options.db ?? join(dir, 'db')}`,
      ...(options.logLevel === undefined ? [] : [`  log-level: ${options.logLevel}`]),
      'stats:',
      `  dir: ${join(dir, 'stats')}`,
      `  db: ${join(dir, 'statsdb')}`,
      ...(options.stats ?? []),
      'api:',
      `  listen: ${options.listen ?? '127.0.0.1:0'}`,
      ...(options.api ?? []),
      '  log: "-"',
      `  pid: ${options.pid ?? join(dir, 'api.pid')}`
    ].join('\n')
  )
  return file
}
