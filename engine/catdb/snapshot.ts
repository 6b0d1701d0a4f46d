/**
 * The category database snapshot: what the collector (the vendor) publishes and the local service
 * downloads (docs/collector.md, "Snapshots").
 *
 * Format: a gzip of UTF-8 text lines, the compiled data-file syntax restricted to what a compiled
 * store holds (already normalised keys, no deletions, no comments in between):
 *
 *     # filterd category snapshot 1
 *     example.com<TAB>40
 *     example.org/some/path<TAB>5,7
 *     # end 2
 *
 * The first line names the format version; the last line repeats the number of entries, so a file
 * cut short is refused even before its digest is compared. A key with a `/` is a URL entry. The
 * file is described by a manifest `{version, size, sha256, url, entries, created}`: `size` and
 * `sha256` are of the gzip bytes as served, so the downloader can verify before it reads a line.
 *
 * Publishing writes `<version>.snap.gz` under a temporary name, renames it into place, then
 * replaces `manifest.json` by rename: a reader of the directory sees the old manifest or the new
 * one, and the file a manifest names is always complete.
 */
import { createHash } from 'node:crypto'
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import { MAX_CATEGORY } from '../categories/index.js'

export const SNAPSHOT_HEADER = '# filterd category snapshot 1'
export const MANIFEST_FILE = 'manifest.json'
/** Snapshots kept beside the current one, for local services still downloading the previous one. */
const KEEP_OLD = 2

export interface SnapshotEntry {
  key: string
  isUrl: boolean
  categories: number[]
}

export interface SnapshotManifest {
  version: number
  /** Bytes of the gzip file. */
  size: number
  /** SHA-256 of the gzip file, lower-case hex. */
  sha256: string
  /**
   * Where to fetch it, relative to the manifest's own URL (`<collector-url>/db/manifest`):
   * `snapshots/<version>.snap.gz`. Relative, so a collector behind a reverse proxy that adds a path
   * prefix (https://vendor.example/filterd/) names the right file without knowing the prefix.
   * Collectors before this change wrote `/db/snapshots/<version>.snap.gz` (local/updater.ts reads both).
   */
  url: string
  entries: number
  created: string
  /** Digest of the data files it was built from (the collector skips republishing unchanged data). */
  source?: string
}

export class SnapshotFormatError extends Error {
  override readonly name = 'SnapshotFormatError'
}

/** Hashes and counts the bytes that pass through. */
class Digest extends Transform {
  readonly hash = createHash('sha256')
  size = 0
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk)
    this.size += chunk.length
    cb(null, chunk)
  }
}

function* lines(entries: Iterable<SnapshotEntry>, counter: { n: number }): Iterable<string> {
  yield SNAPSHOT_HEADER + '\n'
  let batch = ''
  for (const e of entries) {
    batch += `${e.key}\t${e.categories.join(',')}\n`
    counter.n++
    // Text in ~64 KiB pieces: one stream write per line would dominate on millions of entries.
    if (batch.length >= 65536) {
      yield batch
      batch = ''
    }
  }
  yield batch + `# end ${counter.n}\n`
}

/** Writes `entries` as a snapshot file; resolves with its size, digest and entry count. */
export async function writeSnapshotFile(
  entries: Iterable<SnapshotEntry>,
  file: string
): Promise<{ size: number; sha256: string; entries: number }> {
  const counter = { n: 0 }
  const digest = new Digest()
  await pipeline(lines(entries, counter), createGzip(), digest, createWriteStream(file))
  return { size: digest.size, sha256: digest.hash.digest('hex'), entries: counter.n }
}

function parseCats(text: string, lineNo: number): number[] {
  const out: number[] = []
  for (const part of text.split(',')) {
    const n = Number(part)
    if (part === '' || !Number.isInteger(n) || n < 0 || n > MAX_CATEGORY) {
      throw new SnapshotFormatError(`line ${lineNo}: bad category "${part}"`)
    }
    out.push(n)
  }
  return out
}

/**
 * Reads a snapshot file. Throws SnapshotFormatError on a bad header, line or trailer (after
 * yielding the entries before it: callers import into a build they only commit at the end).
 */
export async function* readSnapshotFile(file: string): AsyncIterable<SnapshotEntry> {
  const rl = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity })
  let lineNo = 0
  let count = 0
  let ended = false
  for await (const line of rl) {
    lineNo++
    if (lineNo === 1) {
      if (line !== SNAPSHOT_HEADER)
        throw new SnapshotFormatError(`not a filterd snapshot (first line "${line.slice(0, 40)}")`)
      continue
    }
    if (ended) throw new SnapshotFormatError(`line ${lineNo}: data after the end line`)
    if (line.startsWith('# end ')) {
      if (Number(line.slice(6)) !== count)
        throw new SnapshotFormatError(`end line says ${line.slice(6)} entries, file has ${count}`)
      ended = true
      continue
    }
    const tab = line.indexOf('\t')
    if (tab <= 0) throw new SnapshotFormatError(`line ${lineNo}: expected "name<TAB>categories"`)
    const key = line.slice(0, tab)
    count++
    yield { key, isUrl: key.includes('/'), categories: parseCats(line.slice(tab + 1), lineNo) }
  }
  if (!ended) throw new SnapshotFormatError('the snapshot is cut short (no end line)')
}

/** The current manifest of a snapshot directory, or undefined when nothing is published. */
export function readManifest(dir: string): SnapshotManifest | undefined {
  let text: string
  try {
    text = readFileSync(join(dir, MANIFEST_FILE), 'utf8')
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined
    throw err
  }
  return JSON.parse(text) as SnapshotManifest
}

export function snapshotFileName(version: number): string {
  return `${version}.snap.gz`
}

/** The manifest's `url` of a version: relative to `…/db/manifest`, so it resolves to `…/db/snapshots/<file>`. */
export function snapshotUrlPath(version: number): string {
  return `snapshots/${snapshotFileName(version)}`
}

/**
 * Publishes `entries` as the next version in `dir` and returns its manifest. Older snapshots
 * beyond the last `KEEP_OLD` are removed.
 */
export async function publishSnapshot(
  dir: string,
  entries: Iterable<SnapshotEntry>,
  source?: string
): Promise<SnapshotManifest> {
  mkdirSync(dir, { recursive: true })
  const version = (readManifest(dir)?.version ?? 0) + 1
  const name = snapshotFileName(version)
  const tmp = join(dir, `.${name}.${process.pid}.tmp`)
  try {
    const info = await writeSnapshotFile(entries, tmp)
    renameSync(tmp, join(dir, name))
    const manifest: SnapshotManifest = {
      version,
      size: info.size,
      sha256: info.sha256,
      url: snapshotUrlPath(version),
      entries: info.entries,
      created: new Date().toISOString(),
      ...(source === undefined ? {} : { source })
    }
    writeManifest(dir, manifest)
    pruneSnapshots(dir, version)
    return manifest
  } finally {
    rmSync(tmp, { force: true })
  }
}

/** Replaces the manifest atomically (write a temporary file, rename over). */
export function writeManifest(dir: string, manifest: SnapshotManifest): void {
  const tmp = join(dir, `.${MANIFEST_FILE}.${process.pid}.tmp`)
  writeFileSync(tmp, JSON.stringify(manifest, null, 2) + '\n')
  renameSync(tmp, join(dir, MANIFEST_FILE))
}

function pruneSnapshots(dir: string, current: number): void {
  for (const f of readdirSync(dir)) {
    const m = /^(\d+)\.snap\.gz$/.exec(f)
    if (m !== null && Number(m[1]) < current - KEEP_OLD) rmSync(join(dir, f), { force: true })
  }
}
