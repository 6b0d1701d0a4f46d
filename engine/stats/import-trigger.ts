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
  try {
    const watcher = watch(dir, { persistent: false }, (_event, name) => {
      if (name !== null && CLOSED_RE.test(name)) onClosed()
    })
    watcher.on('error', (err) => {
      logger?.warn({ err, dir }, 'statistics folder watch stopped; imports run on stats.import-interval alone')
      watcher.close()
    })
    return watcher
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    logger?.warn({ err, dir }, 'cannot watch the statistics folder; imports run on stats.import-interval alone')
    return { close: () => undefined }
  }
}
