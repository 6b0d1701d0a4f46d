// A small file system of a test's own, for a full disk: apart from temp.ts because it runs mount and
// umount, and a test that starts processes is a system test (scripts/test-lanes.ts).
import { execFileSync } from 'node:child_process'
import { closeSync, fstatSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
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
    // Lazy: a file a test still holds open cannot leave a mount behind.
    execFileSync('umount', ['-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    dir,
    resize: (to) => {
      execFileSync('mount', ['-o', `remount,size=${to}`, dir])
    }
  }
}

/** `tmpfsDir`'s folder, or undefined when not root (the caller skips). */
export function smallTmpfs(t: Cleanup, size: string): string | undefined {
  return tmpfsUnavailable() === undefined ? tmpfsDir(t, size).dir : undefined
}

/**
 * Fills the file system of `dir` with `<dir>/filler` until it refuses a byte, then gives back
 * `leaveBytes` (rounded up to pages by the file system). Returns the filler's path: remove it for room.
 */
export function fillDisk(dir: string, leaveBytes = 0): string {
  const path = join(dir, 'filler')
  const fd = openSync(path, 'w')
  try {
    const block = Buffer.alloc(64 * 1024)
    for (;;) {
      try {
        if (writeSync(fd, block) < block.length) break
      } catch {
        break // ENOSPC: full
      }
    }
    if (leaveBytes > 0) ftruncateSync(fd, Math.max(0, fstatSync(fd).size - leaveBytes))
  } finally {
    closeSync(fd)
  }
  return path
}
