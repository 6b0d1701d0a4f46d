// A small file system of its own for a test that needs a full disk (a tmpfs; mounting needs root).
import { execFileSync } from 'node:child_process'
import { closeSync, ftruncateSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Cleanup } from './temp.js'

/**
 * Mounts a tmpfs of `size` (mount's syntax: `1m`, `256k`) on a fresh folder outside any test's temp
 * dir (whose removal would meet the mount) and unmounts it after the test; `undefined` when not root
 * (the caller skips). The unmount is lazy, so a file a test still holds open cannot leave a mount behind.
 */
export function smallTmpfs(t: Cleanup, size: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'filterd-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
  t.after(() => {
    execFileSync('umount', ['-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
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
