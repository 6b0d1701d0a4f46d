/**
 * The backup folder's manifest (docs/backup.md): what `filterd backup` copied, with sizes and SHA-256
 * digests. It is written last, so a folder without it is a backup that did not finish; `filterd
 * restore` refuses a folder whose files do not match it, or that holds files it does not list.
 */
import { createHash } from 'node:crypto'
import { createReadStream, openSync, fsyncSync, closeSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { pipeline } from 'node:stream/promises'

export const MANIFEST = 'manifest.json'
export const FORMAT = 'filterd-backup'
export const FORMAT_VERSION = 1

/** The parts of a backup folder: LMDB copies (one `data.mdb` each) and the statistics CSV files. */
export const PARTS = { store: 'store', statsDb: 'statsdb', statsFiles: 'stats' } as const

export interface ManifestFile {
  /** Relative to the backup folder, with `/`. */
  path: string
  size: number
  sha256: string
}

export interface Manifest {
  format: typeof FORMAT
  formatVersion: number
  filterd: string
  node: string
  host: string
  config: string
  started: string
  finished: string
  /** Where each part was copied from. */
  sources: { store: string; statsDb: string | null; statsFiles: string | null }
  /** The store's generation counter and user count at the copy (a check after a restore). */
  store: { generation: number; users: number }
  /** Whether the host followed a shared Redis store (common.redis-ip): the copy is its replica. */
  redis: boolean
  files: ManifestFile[]
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(createReadStream(path), hash)
  return hash.digest('hex')
}

/** Every regular file under `root`, relative, with `/` separators, sorted. */
export function listFiles(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(relative(root, p).split(sep).join('/'))
    }
  }
  walk(root)
  return out.sort()
}

/** Flushes a file or folder to disk (a folder: its entries, so a rename or a new file survives a crash). */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Flushes every file under `root` and every folder, deepest first. */
export function fsyncTree(root: string): void {
  for (const f of listFiles(root)) fsyncPath(join(root, f))
  const dirs: string[] = []
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name))
    dirs.push(dir)
  }
  walk(root)
  for (const d of dirs) fsyncPath(d)
}

export async function describeFiles(root: string, paths: readonly string[]): Promise<ManifestFile[]> {
  const out: ManifestFile[] = []
  for (const path of paths) {
    const full = join(root, path)
    out.push({ path, size: statSync(full).size, sha256: await sha256File(full) })
  }
  return out
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Thrown when a backup folder cannot be restored; the message says what is wrong. */
export class BackupInvalid extends Error {}

/** Reads and checks the manifest's shape (not the files: see verifyBackup). */
export function readManifest(dir: string): Manifest {
  let text: string
  try {
    text = readFileSync(join(dir, MANIFEST), 'utf8')
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === 'ENOENT')
      throw new BackupInvalid(
        `${dir} has no ${MANIFEST}: not a backup, or a backup that did not finish (the manifest is written last)`
      )
    throw new BackupInvalid(`cannot read ${join(dir, MANIFEST)}: ${(err as Error).message}`)
  }
  let m: unknown
  try {
    m = JSON.parse(text)
  } catch {
    throw new BackupInvalid(`${join(dir, MANIFEST)} is not valid JSON`)
  }
  if (!isRecord(m) || m.format !== FORMAT)
    throw new BackupInvalid(`${join(dir, MANIFEST)} is not a filterd backup manifest`)
  if (typeof m.formatVersion !== 'number' || m.formatVersion > FORMAT_VERSION) {
    throw new BackupInvalid(
      `${join(dir, MANIFEST)} has format version ${String(m.formatVersion)}; this filterd reads up to ${FORMAT_VERSION} (restore with the filterd version that made it: ${String(m.filterd)})`
    )
  }
  const files = m.files
  if (
    !Array.isArray(files) ||
    !files.every(
      (f) => isRecord(f) && typeof f.path === 'string' && typeof f.size === 'number' && typeof f.sha256 === 'string'
    )
  ) {
    throw new BackupInvalid(`${join(dir, MANIFEST)}: files is not a list of {path, size, sha256}`)
  }
  if (!files.some((f) => (f as ManifestFile).path === `${PARTS.store}/data.mdb`))
    throw new BackupInvalid(`${join(dir, MANIFEST)} lists no ${PARTS.store}/data.mdb`)
  for (const f of files as ManifestFile[]) {
    if (f.path.split('/').some((s) => s === '..' || s === '') || f.path.startsWith('/'))
      throw new BackupInvalid(`${join(dir, MANIFEST)}: bad path ${JSON.stringify(f.path)}`)
  }
  return m as unknown as Manifest
}

/**
 * Checks that the folder holds exactly the manifest's files, each with its size and digest. Returns
 * the manifest; throws BackupInvalid naming the first file that is missing, changed or unexpected.
 */
export async function verifyBackup(dir: string): Promise<Manifest> {
  const m = readManifest(dir)
  const present = new Set(listFiles(dir))
  present.delete(MANIFEST)
  for (const f of m.files) {
    if (!present.has(f.path)) throw new BackupInvalid(`the backup is incomplete: ${f.path} is missing from ${dir}`)
    present.delete(f.path)
    const full = join(dir, f.path)
    const size = statSync(full).size
    if (size !== f.size)
      throw new BackupInvalid(`the backup is damaged: ${f.path} has ${size} bytes, the manifest says ${f.size}`)
    if ((await sha256File(full)) !== f.sha256)
      throw new BackupInvalid(`the backup is damaged: ${f.path} does not match its SHA-256 in the manifest`)
  }
  const extra = [...present]
  if (extra.length > 0)
    throw new BackupInvalid(
      `${dir} holds files the manifest does not list (${extra.slice(0, 5).join(', ')}): not restoring a folder that was changed after the backup`
    )
  return m
}
