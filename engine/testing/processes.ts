// A process's children and command lines, read from /proc (Linux): what the tests that kill or inspect
// one process of a role find it by.
import { readFileSync, readdirSync } from 'node:fs'

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
