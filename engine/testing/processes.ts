// A process's children and command lines, read from /proc (Linux): what the tests that kill or inspect
// one process of a role find it by.
import { once } from 'node:events'
import { readFileSync, readdirSync } from 'node:fs'
import type { Readable } from 'node:stream'

/** The pids of `pid`'s child processes (every thread's list: a child belongs to the thread that forked it). */
export function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  )
}

/** A process's command line, NUL-separated; '' once it has exited (a zombie has none) or is gone. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return ''
  }
}

/** The children of `pid` whose command line names `script` (say `cluster-worker.js`). */
export function childrenRunning(pid: number, script: string): number[] {
  return childrenOf(pid).filter((child) => commandOf(child).includes(script))
}

/**
 * Waits until a child's output (`output()`, gathered by the caller from `stdout`) holds `ready`; a child that exits
 * first fails the wait with its exit code and signal, where waiting for more output would leave the
 * test pending and cancelled without a word.
 */
export async function untilReady(
  stdout: Readable,
  output: () => string,
  exited: Promise<unknown[]>,
  ready = 'ready'
): Promise<void> {
  while (!output().includes(ready)) {
    const ended = await Promise.race([once(stdout, 'data').then(() => null), exited])
    if (ended !== null && !output().includes(ready))
      throw new Error(`the child exited before it was ready (code, signal: ${JSON.stringify(ended)}): ${output()}`)
  }
}
