// Temporary folders for tests and benchmarks: one implementation, removed afterwards.
import { execFileSync } from 'node:child_process'
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

/** A fresh folder under the OS temp dir, removed after the test (and after `beforeRemoval`'s work). */
export function tempDir(t: Cleanup, prefix = 'filterd-'): string {
  const { dir, cleanup } = makeTempDir(prefix)
  t.after(async () => {
    for (const fn of BEFORE_REMOVAL.get(t) ?? []) await fn()
    cleanup()
  })
  return dir
}

/** Why a small file system of its own cannot be mounted here, or undefined when it can (root). */
export function tmpfsUnavailable(): string | undefined {
  return process.getuid?.() === 0 ? undefined : 'needs root to mount a small tmpfs'
}

/**
 * A fresh folder with a tmpfs of `size` (`mount -o size=`: `1m`, `256k`) mounted on it, for a full
 * disk: unmounted and removed after the test, once what `beforeRemoval` registered (daemons with
 * files open on it) has ended. Root only: check `tmpfsUnavailable()` first. `resize` changes its
 * size in place (room again after a full disk).
 */
export function tmpfsDir(
  t: Cleanup,
  size: string,
  prefix = 'filterd-tmpfs-'
): { dir: string; resize(size: string): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
  t.after(async () => {
    for (const fn of BEFORE_REMOVAL.get(t) ?? []) await fn()
    execFileSync('umount', [dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    dir,
    resize: (to) => {
      execFileSync('mount', ['-o', `remount,size=${to}`, dir])
    }
  }
}
