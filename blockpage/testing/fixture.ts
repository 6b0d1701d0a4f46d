/**
 * Test helpers for the block page (not a test file): a temp store with a small category database and
 * a known policy, a config pointing at it, a started block page, and a raw HTTP client that sets Host,
 * Accept and the source address freely.
 *
 * Client addresses (all loopback, so Linux lets a socket bind them):
 *   127.0.0.1  anonymous: server defaults, filter [GAMBLING]
 *   127.0.0.2  alice: filter [SOCIAL_NETWORKS], blacklist user-listed.example
 *   127.0.0.3  bob: allow-only (blacklist `-`), whitelist ok.example
 *   127.0.0.4  carol: safe search on
 */
import { writeFileSync } from 'node:fs'
import { httpRequest, type RawHttpResponse } from '../../engine/testing/http.js'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { CATEGORY } from '../../engine/categories/index.js'
import { type Config } from '../../engine/config/index.js'
import { parseConfig } from '../../engine/features.js'
import type { HttpImpl } from '../../engine/http/index.js'
import { Store } from '../../engine/store/index.js'
import { DEFAULT_TEMPLATES_DIR } from '../templates.js'
import { startBlockPage, type FrontDoorLike, type RunningBlockPage } from '../server.js'
import { startFeedTransfers } from '../../engine/rpz-feeds/feed-set.js'
import { addUser, buildCats } from '../../engine/testing/store.js'
import { makeTempDir, type Cleanup } from '../../engine/testing/temp.js'

/** conf/ of the checkout (catgroups*.json, categories.meta.json, safesearch.txt). */
export const CONF_DIR = fileURLToPath(new URL('../../../conf/', import.meta.url))
/** test-output/ of the checkout (git-ignored). */
export const TEST_OUTPUT_DIR = fileURLToPath(new URL('../../../test-output/', import.meta.url))

export const ANON = '127.0.0.1'
export const ALICE = '127.0.0.2'
export const BOB = '127.0.0.3'
export const CAROL = '127.0.0.4'

export interface FixtureOptions {
  impl?: 'auto' | HttpImpl
  frontDoor?: FrontDoorLike
  /** Extra YAML lines inside the blockpage section (`language: en`). */
  blockpage?: string[]
  /** `api.listen`: where the front door forwards (default 127.0.0.1:9, where nothing answers). */
  apiListen?: string
  /** Extra YAML lines inside the api section. */
  api?: string[]
  /** `blockpage.product-name` (default `Test Filter`). */
  productName?: string
  /** `blockpage.templates` (default: the shipped directory). */
  templates?: string
  /** `/config/` safesearchredirect. */
  redirect?: string
  /** Extra top-level YAML lines (other sections, e.g. `rpz-feeds`). */
  sections?: string[]
}

export interface Fixture {
  readonly dir: string
  readonly store: Store
  readonly config: Readonly<Config>
  readonly configFile: string
  readonly bp: RunningBlockPage
}

/** Writes the temp dir, store, category database and config; does not start a server. */
export type { Cleanup } from '../../engine/testing/temp.js'

export async function makeStore(
  t: Cleanup,
  options: FixtureOptions = {}
): Promise<{ dir: string; store: Store; config: Readonly<Config>; configFile: string }> {
  const { dir, cleanup } = makeTempDir('filterd-blockpage-')
  const store = Store.open(join(dir, 'db'))
  t.after(async () => {
    await store.close()
    cleanup()
  })
  await buildCats(store, {
    'casino.example': [CATEGORY.GAMBLING],
    'social.example': [CATEGORY.SOCIAL_NETWORKS],
    'mixed.example': [CATEGORY.GAMBLING, CATEGORY.SOCIAL_NETWORKS],
    'news.example': [CATEGORY.SEARCH_ENGINES]
  })
  // The users before the server defaults: a new user starts from the defaults' filter, and bob and
  // carol have no categories of their own.
  await addUser(
    store,
    { name: 'alice', ip: [ALICE], filter: [CATEGORY.SOCIAL_NETWORKS] },
    { black: ['user-listed.example'] }
  )
  await addUser(store, { name: 'bob', ip: [BOB] }, { black: ['-'], white: ['ok.example'] })
  await addUser(store, { name: 'carol', ip: [CAROL], safesearch: 'on' })
  await store.write((w) => {
    w.putServerDefaults({
      filter: [CATEGORY.GAMBLING],
      safesearch: false,
      safeyoutube: false,
      safesearchredirect: options.redirect ?? ''
    })
    w.putList(null, 'black', ['global-listed.example'])
  })
  const configFile = join(dir, 'filterd.yaml')
  const yaml = [
    'datafiles:',
    `  cats: ${CONF_DIR}`,
    '  language: ru',
    'blockpage:',
    '  listen: 127.0.0.1:0',
    `  log: ${join(dir, 'blockpage.log')}`,
    `  pid: ${join(dir, 'blockpage.pid')}`,
    `  product-name: ${JSON.stringify(options.productName ?? 'Test Filter')}`,
    `  templates: ${options.templates ?? DEFAULT_TEMPLATES_DIR}`,
    ...(options.blockpage ?? []).map((l) => `  ${l}`),
    'api:',
    `  listen: ${options.apiListen ?? '127.0.0.1:9'}`,
    '  host: api.test',
    ...(options.api ?? []).map((l) => `  ${l}`),
    'common:',
    `  db: ${join(dir, 'db')}`,
    '  log-level: silent',
    'proxy:',
    `  safesearch-hosts: ${join(CONF_DIR, 'safesearch.txt')}`,
    ...(options.sections ?? []),
    ''
  ].join('\n')
  writeFileSync(configFile, yaml)
  const config = parseConfig(yaml, configFile, {})
  return { dir, store, config, configFile }
}

/** A started block page on 127.0.0.1 port 0 over the fixture store; closed after the test. */
export async function startFixture(t: TestContext, options: FixtureOptions = {}): Promise<Fixture> {
  const base = await makeStore(t, options)
  // The feeds of `rpz-feeds` (none unless `sections` sets some), followed into the store as the host's
  // dns role does; the block page reads them there.
  const transfers = await startFeedTransfers(base.config, base.store, { info: () => {}, warn: () => {} })
  if (transfers !== null) t.after(() => transfers.close())
  const bp = await startBlockPage({
    config: base.config,
    store: base.store,
    impl: options.impl ?? 'auto',
    ...(options.frontDoor === undefined ? {} : { frontDoor: options.frontDoor })
  })
  t.after(() => bp.close())
  return { ...base, bp }
}

export type Answer = RawHttpResponse

export interface GetOptions {
  host: string
  path?: string
  from?: string
  accept?: string
  acceptLanguage?: string
  method?: string
}

/** Browser-like page load by default (Accept: text/html…). `accept: ''` sends no Accept. */
export const PAGE_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'

export function get(port: number, options: GetOptions): Promise<Answer> {
  const headers: Record<string, string> = { Host: options.host }
  const accept = options.accept ?? PAGE_ACCEPT
  if (accept !== '') headers.Accept = accept
  if (options.acceptLanguage !== undefined) headers['Accept-Language'] = options.acceptLanguage
  return httpRequest({
    port,
    localAddress: options.from ?? ANON,
    method: options.method ?? 'GET',
    path: options.path ?? '/',
    headers
  })
}

/** The text a person reads: tags, style and script dropped, entities of the shipped pages decoded, spaces collapsed. */
export function visibleText(html: string): string {
  return html
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
}
