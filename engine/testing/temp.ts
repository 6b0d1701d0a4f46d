// Temporary folders for tests and benchmarks: one implementation, removed afterwards.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Where cleanup is registered: a node:test context, or a benchmark's own list. */
export interface Cleanup {
  after(fn: () => unknown): void
}

/** A fresh folder under the OS temp dir and the function that removes it. */
export function makeTempDir(prefix = 'filterd-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  // Retries: a daemon of the test may still be writing a file into it (ENOTEMPTY).
  return {
    dir,
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
    }
  }
}

/** Per test: what must end before its folders go (daemons writing into them), see `beforeRemoval`. */
const BEFORE_REMOVAL = new WeakMap<Cleanup, Array<() => Promise<void>>>()

/**
 * Runs `fn` before any folder `tempDir(t)` made is removed. node:test runs after-hooks in the order
 * they were registered, so a daemon started after its world's folder was made would otherwise be
 * stopped after the folder's removal, while it still writes into it (ENOTEMPTY).
 */
export function beforeRemoval(t: Cleanup, fn: () => Promise<void>): void {
  const list = BEFORE_REMOVAL.get(t)
  if (list === undefined) BEFORE_REMOVAL.set(t, [fn])
  else list.push(fn)
}

/** Runs what `beforeRemoval` registered for `t`: the daemons that write into its folders end first. */
export async function runBeforeRemoval(t: Cleanup): Promise<void> {
  for (const fn of BEFORE_REMOVAL.get(t) ?? []) await fn()
}

/** A fresh folder under the OS temp dir, removed after the test (and after `beforeRemoval`'s work). */
export function tempDir(t: Cleanup, prefix = 'filterd-'): string {
  const { dir, cleanup } = makeTempDir(prefix)
  t.after(async () => {
    await runBeforeRemoval(t)
    cleanup()
  })
  return dir
}
