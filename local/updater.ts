/**
 * Database updates from the vendor (docs/local.md, "Database updates").
 *
 * 1. `GET <collector-url>/db/manifest` (key in `X-Filterd-Key`) → `{version, size, sha256, url}`;
 *    nothing to do when its sha256 is the one applied last. `url` is relative to the manifest
 *    (snapshotDownloadUrl).
 * 2. Download the snapshot into a temporary file beside the database, hashing as it streams; a
 *    body longer than `size` is cut off at once; a size or digest mismatch refuses the update.
 * 3. Import the verified file into a new catdb version (CategoryDbBuilder) and commit: readers
 *    switch in one meta write, so a lookup sees the old tables or the new ones, never a mix, and
 *    lookups never stop meanwhile. A snapshot whose lines do not parse is never committed.
 * Any failure keeps the database in use and is retried at the next check.
 */
import { createHash } from 'node:crypto'
import { createWriteStream, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Readable, Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { CategoryDb, CategoryDbBuilder, readSnapshotFile, type SnapshotManifest } from '../engine/catdb/index.js'
import type { Logger } from '../engine/log/index.js'
import type { Store } from '../engine/store/index.js'
/** Meta key of the applied snapshot: `{version, sha256}`. */
export const META_SNAPSHOT = 'local.snapshot'
const MANIFEST_TIMEOUT_MS = 15_000
const DOWNLOAD_TIMEOUT_MS = 30 * 60_000

export interface UpdaterOptions {
  collectorUrl: string
  key: string
  intervalSeconds: number
  store: Store
  catdb: CategoryDb
  logger: Logger
}

export type UpdateOutcome = 'current' | 'applied' | 'refused' | 'failed'

class SizeLimit extends Transform {
  readonly hash = createHash('sha256')
  size = 0
  readonly #limit: number
  constructor(limit: number) {
    super()
    this.#limit = limit
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.size += chunk.length
    if (this.size > this.#limit) {
      cb(new Error(`download exceeds the manifest size ${this.#limit}`))
      return
    }
    this.hash.update(chunk)
    cb(null, chunk)
  }
}

/**
 * Where to download the snapshot a manifest names.
 *
 * The collector publishes `url` relative to the manifest (`snapshots/7.snap.gz`), so it resolves
 * against the manifest's own URL (RFC 3986 §5.2) and keeps any path prefix of `collector-url`: with
 * https://vendor.example/filterd/ the file is https://vendor.example/filterd/db/snapshots/7.snap.gz.
 * Older collectors published `/db/snapshots/7.snap.gz`, absolute from the collector's root; the
 * collector's root is `collector-url`, so that exact form is read under it (resolving it against the
 * host would drop the prefix). Any other URL, a full one (a CDN) included, resolves as RFC 3986 says.
 */
export function snapshotDownloadUrl(url: string, manifestUrl: URL, collectorBase: string): URL {
  if (/^\/db\/snapshots\/[^/]+$/.test(url)) return new URL(url.slice(1), collectorBase)
  return new URL(url, manifestUrl)
}

function isManifest(v: unknown): v is SnapshotManifest {
  const m = v as Partial<SnapshotManifest> | null
  return (
    m !== null &&
    typeof m === 'object' &&
    Number.isSafeInteger(m.version) &&
    Number.isSafeInteger(m.size) &&
    (m.size ?? -1) >= 0 &&
    typeof m.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(m.sha256) &&
    typeof m.url === 'string'
  )
}

export class Updater {
  readonly #opts: UpdaterOptions
  readonly #base: string
  #timer: NodeJS.Timeout | null = null
  #running: Promise<UpdateOutcome> | null = null
  #closed = false
  readonly #abort = new AbortController()

  constructor(opts: UpdaterOptions) {
    this.#opts = opts
    this.#base = opts.collectorUrl.endsWith('/') ? opts.collectorUrl : opts.collectorUrl + '/'
  }

  /** The snapshot applied last, if any. */
  applied(): { version: number; sha256: string } | undefined {
    return this.#opts.store.getMeta(META_SNAPSHOT) as { version: number; sha256: string } | undefined
  }

  /** Runs the first check, then one every interval. */
  async start(): Promise<void> {
    await this.checkNow()
  }

  /** Checks for an update now (or joins the check in flight). */
  checkNow(): Promise<UpdateOutcome> {
    if (this.#running !== null) return this.#running
    if (this.#timer !== null) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    this.#running = this.#check()
      .catch((err: unknown) => {
        if (!this.#closed) this.#opts.logger.error({ err }, 'database update failed; keeping the database in use')
        return 'failed' as const
      })
      .finally(() => {
        this.#running = null
        if (!this.#closed)
          this.#timer = setTimeout(() => {
            void this.checkNow()
          }, this.#opts.intervalSeconds * 1000)
      })
    return this.#running
  }

  async #check(): Promise<UpdateOutcome> {
    const { logger } = this.#opts
    const headers = { 'x-filterd-key': this.#opts.key }
    const manifestUrl = new URL('db/manifest', this.#base)
    const res = await fetch(manifestUrl, {
      headers,
      signal: AbortSignal.any([AbortSignal.timeout(MANIFEST_TIMEOUT_MS), this.#abort.signal])
    })
    if (res.status !== 200) {
      await res.arrayBuffer()
      throw new Error(`manifest answered ${res.status}`)
    }
    const manifest: unknown = await res.json()
    if (!isManifest(manifest)) throw new Error('the manifest is malformed')
    const applied = this.applied()
    if (applied?.sha256 === manifest.sha256) return 'current'

    const tmp = join(this.#opts.store.path, `.download-${process.pid}-${manifest.version}.tmp`)
    try {
      const got = await fetch(snapshotDownloadUrl(manifest.url, manifestUrl, this.#base), {
        headers,
        signal: AbortSignal.any([AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS), this.#abort.signal])
      })
      if (got.status !== 200 || got.body === null) {
        await got.arrayBuffer()
        throw new Error(`snapshot download answered ${got.status}`)
      }
      const check = new SizeLimit(manifest.size)
      try {
        await pipeline(Readable.fromWeb(got.body as WebReadableStream<Uint8Array>), check, createWriteStream(tmp))
      } catch (err) {
        logger.error(
          { version: manifest.version, reason: (err as Error).message },
          'database update refused: download failed verification; keeping the database in use'
        )
        return 'refused'
      }
      const sha256 = check.hash.digest('hex')
      if (check.size !== manifest.size || sha256 !== manifest.sha256) {
        logger.error(
          {
            version: manifest.version,
            expected: { size: manifest.size, sha256: manifest.sha256 },
            got: { size: check.size, sha256 }
          },
          'database update refused: download failed verification; keeping the database in use'
        )
        return 'refused'
      }
      const started = Date.now()
      const builder = await CategoryDbBuilder.begin(this.#opts.store)
      let entries = 0
      try {
        for await (const e of readSnapshotFile(tmp)) {
          if (this.#abort.signal.aborted) return 'failed'
          await builder.put(e.key, e.isUrl, e.categories)
          entries++
        }
      } catch (err) {
        // Never committed: the tables of this build are cleared by the next begin().
        logger.error(
          { version: manifest.version, reason: (err as Error).message },
          'database update refused: snapshot does not parse; keeping the database in use'
        )
        return 'refused'
      }
      await builder.commit()
      await this.#opts.store.write((w) => {
        w.putMeta(META_SNAPSHOT, { version: manifest.version, sha256: manifest.sha256 })
      })
      this.#opts.catdb.refresh()
      logger.info(
        { version: manifest.version, entries, ms: Date.now() - started, previous: applied?.version ?? null },
        'database update applied'
      )
      return 'applied'
    } finally {
      rmSync(tmp, { force: true })
    }
  }

  /** Stops scheduling and abandons a download in flight; resolves once the check has ended. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#abort.abort()
    await this.#running
  }
}
