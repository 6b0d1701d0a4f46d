// A small file system of a test's own, for a full disk: apart from temp.ts because it runs mount and
// umount, and a test that starts processes is a system test (scripts/test-lanes.ts).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Cleanup, runBeforeRemoval } from './temp.js'

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
    await runBeforeRemoval(t)
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
