/**
 * The categorization API's lookup core, shared by both listeners: the category database, the answer bodies
 * kept as bytes, and the generation watcher that drops what was cached when the store changes.
 */
import { CategoryDb, decodeCats } from '../engine/catdb/index.js'
import type { Taxonomy } from '../engine/categories/index.js'
import { GenerationWatcher, type Store } from '../engine/store/index.js'
import { nonExistingVerdict, toAsciiJson, verdictOf } from '../engine/verdict/index.js'

/** The spec's fixed name for category 0 in the 206 answer. */
export const NON_EXISTING_NAME = 'Non-Existing Domain'

/** Distinct category sets whose bodies are kept; past this the cache starts again (a bound, not a tuning). */
const MAX_BODIES = 10_000

export class CatLookup {
  readonly catdb: CategoryDb
  /** Bodies are kept as bytes: sent as they are, with no UTF-8 conversion per request. */
  readonly catgroupsBody: Buffer
  readonly nonExistingBody: Buffer
  readonly #taxonomy: Taxonomy
  readonly #watcher: GenerationWatcher
  // Serialised verdicts by category set: there are few distinct sets, and a hit then costs one Map
  // lookup instead of building and escaping JSON. The key is a number for one or two categories
  // (most names; no string is built per request), else the raw uint16 bytes as a latin1 string.
  #bodies = new Map<number | string, Buffer>()

  /** `onGeneration` also runs on every store write (the authenticator drops its cached verifications). */
  constructor(store: Store, taxonomy: Taxonomy, onGeneration: (generation: number) => void) {
    this.catdb = new CategoryDb(store)
    this.#taxonomy = taxonomy
    this.catgroupsBody = Buffer.from(toAsciiJson(taxonomy.groups))
    // The spec fixes this answer's text (`category_name` = ["Non-Existing Domain"]); integrations match
    // on it, so it stays English even when category names are Russian.
    this.nonExistingBody = Buffer.from(
      toAsciiJson({ ...nonExistingVerdict(taxonomy), category_name: [NON_EXISTING_NAME] })
    )
    // Every store write (clients, a category rebuild) bumps the generation; it is polled per request,
    // so a write is enforced for every request that starts GENERATION_CHECK_MS after it.
    this.#watcher = new GenerationWatcher(store, (g) => {
      onGeneration(g)
      if (this.catdb.refresh()) this.#bodies = new Map()
    })
  }

  /** Notices store writes (at most one `meta` read per GENERATION_CHECK_MS). */
  follow(): void {
    this.#watcher.poll()
  }

  /** The verdict body of a raw category set (as the category database stores it). */
  bodyFor(rawCats: Buffer): Buffer {
    const n = rawCats.length
    const key =
      n === 2 ? rawCats.readUInt16BE(0) : n === 4 ? rawCats.readUInt32BE(0) + 0x1_0000_0000 : rawCats.toString('latin1')
    let body = this.#bodies.get(key)
    if (body === undefined) {
      body = Buffer.from(toAsciiJson(verdictOf(decodeCats(rawCats), this.#taxonomy)))
      if (this.#bodies.size >= MAX_BODIES) this.#bodies = new Map()
      this.#bodies.set(key, body)
    }
    return body
  }
}
