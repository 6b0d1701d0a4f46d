/**
 * The collector's publishing: the config's data files (`datafiles.path` + `datafiles.file`, as `build-db` reads
 * them) compiled into category tables in the collector's own environment and published as the next snapshot,
 * unless they are byte for byte the files the current snapshot was built from.
 */
import { createHash } from 'node:crypto'
import { createReadStream, existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../engine/config/index.js'
import {
  CategoryDb,
  buildCategoryDb,
  publishSnapshot,
  readManifest,
  type SnapshotManifest
} from '../engine/catdb/index.js'
import type { Logger } from '../engine/log/index.js'
import type { Store } from '../engine/store/index.js'

/** Digest of the data files' names and bytes, in their layer order; undefined when none exists. */
async function dataDigest(config: Readonly<Config>): Promise<string | undefined> {
  const hash = createHash('sha256')
  let found = 0
  for (const f of config.datafiles.file) {
    const path = join(config.datafiles.path, f)
    hash.update(`${f}\0`)
    if (!existsSync(path)) continue
    found++
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
    hash.update('\0')
  }
  return found === 0 ? undefined : hash.digest('hex')
}

/** Compiles the data files and publishes them as a new snapshot when they changed. */
export async function publishFromDatafiles(
  config: Readonly<Config>,
  store: Store,
  logger: Logger
): Promise<SnapshotManifest | undefined> {
  const dir = config.collector.snapshots
  const digest = await dataDigest(config)
  if (digest === undefined) {
    logger.warn({ path: config.datafiles.path, files: config.datafiles.file }, 'no data file found; nothing to publish')
    return undefined
  }
  const current = readManifest(dir)
  if (current?.source === digest) {
    logger.info({ version: current.version }, 'data files unchanged; snapshot already published')
    return current
  }
  const result = await buildCategoryDb(config, store, { log: (line) => logger.info(line) })
  if (!result.committed) {
    logger.error({ errors: result.errors }, 'data files have malformed lines; snapshot not published')
    return undefined
  }
  const manifest = await publishSnapshot(dir, new CategoryDb(store).entries(), digest)
  logger.info(
    { version: manifest.version, entries: manifest.entries, size: manifest.size, sha256: manifest.sha256 },
    'snapshot published'
  )
  return manifest
}
