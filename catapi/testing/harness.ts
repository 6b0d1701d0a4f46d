/**
 * Test helpers for the categorization API (not a test file itself): a temp store with a small
 * category database, a stub resolver, a running API on port 0, raw HTTP requests, and clients
 * with cheap scrypt parameters.
 */
import { httpRequest, type RawHttpResponse } from '../../engine/testing/http.js'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { buildCats, type CatEntry } from '../../engine/testing/store.js'
import { makeTempDir } from '../../engine/testing/temp.js'
import { loadTaxonomy, type Taxonomy } from '../../engine/categories/index.js'
import { Store } from '../../engine/store/index.js'
import { startStubResolver, type StubResolver } from '../../engine/upstream-stub/index.js'
import { clientRecord } from '../../engine/auth/index.js'
import { ExistenceChecker } from '../resolver.js'
import { createCatApi, type CatApi, type CatApiOptions } from '../server.js'

/** The repository's conf/ (taxonomy files), found from dist/catapi/testing/. */
export const CONF_DIR = fileURLToPath(new URL('../../../conf/', import.meta.url))
export const CHEAP_SCRYPT = { N: 1024, r: 8, p: 1 }

export { buildCats, type CatEntry as Entry } from '../../engine/testing/store.js'

export const DEFAULT_ENTRIES: readonly CatEntry[] = [
  ['example.com', [40]],
  ['ads.example.com', [1, 10]],
  ['games.test', [4]],
  ['example.com/Games', [20], 'url'],
  ['example.com/Games/Poker', [21], 'url'],
  ['example.com/q?x=1', [22], 'url'],
  ['example.com/a%20b', [23], 'url']
]

export interface Harness {
  readonly store: Store
  readonly dbPath: string
  readonly api: CatApi
  readonly resolver: StubResolver
  readonly taxonomy: Taxonomy
  readonly registered: number
  readonly anonymous: number
  /** Test clock (ms); starts at a fixed instant and only moves when a test moves it. */
  clock: number
}

export interface HarnessOptions {
  readonly impl?: 'uws' | 'node'
  readonly lang?: 'ru' | 'en'
  readonly entries?: readonly CatEntry[]
  readonly nxdomain?: string[]
  readonly api?: Partial<CatApiOptions>
  readonly timeoutMs?: number
}

export async function startHarness(t: TestContext, options: HarnessOptions = {}): Promise<Harness> {
  // One cleanup in a fixed order (node:test runs `after` hooks in registration order): the API
  // flushes usage into the store, so it closes before the store, and the directory goes last.
  const cleanups: Array<() => unknown> = []
  t.after(async () => {
    for (const c of cleanups.reverse()) await c()
  })
  const { dir: dbPath, cleanup } = makeTempDir('filterd-catapi-')
  cleanups.push(cleanup)
  const store = Store.open(dbPath)
  cleanups.push(() => store.close())
  await buildCats(store, options.entries ?? DEFAULT_ENTRIES)
  const resolver = await startStubResolver({ nxdomain: options.nxdomain ?? ['gone.example'] })
  cleanups.push(() => resolver.close())
  const taxonomy = loadTaxonomy(CONF_DIR, options.lang ?? 'en')
  const h = { clock: Date.UTC(2024, 4, 1, 12, 0, 0) } as Harness
  const api = createCatApi({
    store,
    taxonomy,
    existence: new ExistenceChecker({
      resolvers: [{ host: resolver.host, port: resolver.port, family: 4 }],
      timeoutMs: options.timeoutMs ?? 2000
    }),
    now: () => h.clock,
    ...(options.impl === undefined ? {} : { impl: options.impl }),
    ...options.api
  })
  const ports = await api.listen({ host: '127.0.0.1', port: 0 }, { host: '127.0.0.1', port: 0 })
  cleanups.push(() => api.close())
  return Object.assign(h, {
    store,
    dbPath,
    api,
    resolver,
    taxonomy,
    registered: ports.registered,
    anonymous: ports.anonymous
  })
}

/** Adds a client straight into the store (cheap scrypt); returns its Basic header. */
export async function addClient(store: Store, id: string, secret: string): Promise<string> {
  const record = await clientRecord(id, secret, new Date().toISOString(), undefined, CHEAP_SCRYPT)
  await store.write((w) => {
    w.putClient(record)
  })
  return basic(id, secret)
}

export function basic(id: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64')
}

export type RawResponse = RawHttpResponse

/** GET with the path sent byte for byte (fetch would normalise it), on a fresh connection. */
export function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  localAddress?: string
): Promise<RawResponse> {
  return httpRequest({ port, path, headers, ...(localAddress === undefined ? {} : { localAddress }) })
}
