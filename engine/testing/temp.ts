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

/** A fresh folder under the OS temp dir, removed after the test. */
export function tempDir(t: Cleanup, prefix = 'filterd-'): string {
  const { dir, cleanup } = makeTempDir(prefix)
  t.after(cleanup)
  return dir
}
