/**
 * Wakes the importer when a DNS process closes a statistics file, rather than at its next
 * `stats.import-interval` tick: a closed file is a rename into `stats.dir` (./files.ts), which
 * inotify reports at once. This takes up to an interval off the time from query to report; the
 * interval stays as the backstop for what a watch can miss (a folder on a network file system,
 * the inotify watch limit reached).
 */
import { watch } from 'node:fs'
import type { Logger } from '../log/index.js'
import { CLOSED_RE } from './files.js'

export interface ClosedFileWatch {
  close(): void
}

/**
 * Calls `onClosed` for every closed file that appears in `dir`. Undefined when the folder does not
 * exist yet (the DNS role makes it: the caller tries again later); any other failure is logged, and
 * the imports run on their interval alone.
 */
export function watchClosedFiles(
  dir: string,
  onClosed: () => void,
  logger: Logger | undefined
): ClosedFileWatch | undefined {
  return watchFileNames(
    dir,
    (_event, name) => CLOSED_RE.test(name),
    onClosed,
    logger,
    'imports run on stats.import-interval alone'
  )
}

/**
 * Calls `onName` on each event in `dir` that `wanted` accepts: `rename` (a name created, renamed or removed)
 * or `change` (a file written), with the name it is about. Undefined when the folder does not exist yet;
 * any other failure is logged with `fallback` (what the caller does instead) and watches nothing.
 */
export function watchFileNames(
  dir: string,
  wanted: (event: 'rename' | 'change', name: string) => boolean,
  onName: () => void,
  logger: Logger | undefined,
  fallback: string
): ClosedFileWatch | undefined {
  try {
    const watcher = watch(dir, { persistent: false }, (event, name) => {
      if (name !== null && wanted(event, name)) onName()
    })
    watcher.on('error', (err) => {
      logger?.warn({ err, dir }, `statistics folder watch stopped; ${fallback}`)
      watcher.close()
    })
    return watcher
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    logger?.warn({ err, dir }, `cannot watch the statistics folder; ${fallback}`)
    return { close: () => undefined }
  }
}
