/**
 * Background CPU priority for a process whose work must never take a core from the answers: every
 * thread of this process is moved to nice 19 (a weight of 15 against a normal task's 1,024), so on a
 * host whose cores the DNS fronts keep busy it runs on what they leave.
 *
 * Linux keeps a nice value per thread: `setpriority` given a thread id changes only that thread, and a
 * thread started later takes the value of the thread that starts it. So the threads there are now
 * (the main one, V8's and libuv's) are moved one by one from /proc/self/task, and every later one
 * inherits the value. Raising a nice value never needs a privilege. Off Linux only the main thread moves.
 */
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The nice value of background work. */
export const BACKGROUND_NICE = 19

/** Moves every thread of this process to `nice`; returns how many moved (a thread that ended meanwhile is skipped). */
export function lowerToBackground(nice: number = BACKGROUND_NICE): number {
  let tasks: string[]
  try {
    tasks = readdirSync('/proc/self/task')
  } catch {
    setPriority(nice)
    return 1
  }
  let moved = 0
  for (const tid of tasks) {
    try {
      setPriority(Number(tid), nice)
      moved++
    } catch {
      // The thread ended between the read and the call.
    }
  }
  return moved
}
