/**
 * The statistics store's CPU priority (`stats.import-priority`): on a host that also answers DNS, the
 * import, compaction and folds are background work that must never delay an answer.
 *
 * DuckDB works on threads of its own and on libuv's pool (the Node client runs every query there); the
 * process's main thread runs the JavaScript (the api role's HTTP routes). Linux schedules each thread on
 * its own, and `setpriority`/`sched_setscheduler` given a thread id change only that thread. So every
 * thread of the process but the main one is moved to the background:
 *
 *   idle        SCHED_IDLE (`chrt --idle`): runs only when no other thread of the machine wants the CPU,
 *               and any other task that wakes up takes the CPU from it at once.
 *   background  nice 19 (`os.setPriority`): a weight of 15 against a normal task's 1,024.
 *   normal      unchanged.
 *
 * Threads appear lazily (libuv starts its pool at the first query; DuckDB its workers at open), and a
 * new thread inherits the priority of the thread that made it only under Linux's rules, so the list of
 * threads (/proc/self/task) is read again before each use of the store and new ones are moved too.
 * Off Linux this does nothing; without chrt, `idle` falls back to nice 19 (the first failure is told).
 *
 * A live file that waits too long (./live-boost.ts) lifts the `background` threads to nice 0 for the rest
 * of its import: on a host whose cores other work keeps busy, nice 19 gets about 1.5% of a core and a
 * 3 s file of 20,000 q/s took more than the 10 s freshness goal. Lowering a nice value needs
 * CAP_SYS_NICE or an RLIMIT_NICE of 20 (systemd `LimitNICE=20`): refused, the boost is told once and
 * given up, the import stays in the background.
 */
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parseTaskStat } from '../cpu-priority/index.js'

export type StatsPriority = 'idle' | 'background' | 'normal'

/** nice of a background thread. */
const BACKGROUND_NICE = 19

/** Moves one thread; failures (a thread that ended meanwhile, no chrt) are left to `onError`. */
function moveThread(tid: number, priority: StatsPriority, onError: (err: Error) => void): void {
  if (priority === 'background') {
    try {
      setPriority(tid, BACKGROUND_NICE)
    } catch (err) {
      onError(err as Error)
    }
    return
  }
  // SCHED_IDLE has no Node binding; chrt (util-linux) makes the one system call. Without it: nice 19.
  execFile('chrt', ['--idle', '--pid', '0', String(tid)], (err) => {
    if (err === null) return
    onError(err)
    moveThread(tid, 'background', () => {})
  })
}

/** The api role's statistics threads: moved to the background, and lifted for a late live file. */
export interface ThreadPrioritizer {
  /** Moves every thread of this process but the main one, not yet moved, to the priority; cheap (one small directory read). */
  (): void
  /**
   * Lifts the moved threads to nice 0 (`true`) or puts them back (`false`); only for `background`.
   * Returns the kernel's refusal of the lift, once; later calls do nothing and return undefined.
   */
  boost(on: boolean): Error | undefined
}

/**
 * Returns a function that moves every thread of this process but the main one, not yet moved, to
 * `priority`; cheap enough to call before every write (one small directory read).
 */
export function threadPrioritizer(
  priority: StatsPriority,
  onError: (err: Error) => void = () => {}
): ThreadPrioritizer {
  if (priority === 'normal' || process.platform !== 'linux') return Object.assign(() => {}, { boost: () => undefined })
  const moved = new Set<number>([process.pid]) // the main thread's id is the process id
  let failed = false
  let told = false
  let boosted = false
  let boostRefused = false
  const tell = (err: Error): void => {
    // Once: a missing chrt or a refused change would fail the same way for every thread.
    if (!told) onError(err)
    told = true
  }
  const prioritize = (): void => {
    if (failed || boosted) return // a boost ends with every thread, new ones too, put back
    let tids: string[]
    try {
      tids = readdirSync('/proc/self/task')
    } catch (err) {
      failed = true
      tell(err as Error)
      return
    }
    for (const t of tids) {
      const tid = Number(t)
      if (moved.has(tid)) continue
      moved.add(tid)
      moveThread(tid, priority, tell)
    }
  }
  /** Sets every moved thread but the main one to `nice`; the first refusal (not a thread that ended) is returned. */
  const niceAll = (nice: number): Error | undefined => {
    for (const tid of moved) {
      if (tid === process.pid) continue
      try {
        setPriority(tid, nice)
      } catch (err) {
        // os.setPriority throws ERR_SYSTEM_ERROR with the errno's name in `info.code`.
        if ((err as { info?: { code?: string } }).info?.code !== 'ESRCH') return err as Error
      }
    }
    return undefined
  }
  const boost = (on: boolean): Error | undefined => {
    if (priority !== 'background' || boostRefused || on === boosted) return undefined
    boosted = on
    const refused = niceAll(on ? 0 : BACKGROUND_NICE)
    if (on && refused !== undefined) {
      boostRefused = true
      boosted = false
      niceAll(BACKGROUND_NICE) // the threads lifted before the refusal go back
      return refused
    }
    if (!on) prioritize() // threads started during the boost
    return undefined
  }
  return Object.assign(prioritize, { boost })
}

/** The scheduling of thread `tid` of this process, as /proc shows it: policy number (5 = SCHED_IDLE) and nice. */
export function threadScheduling(tid: number, read: (path: string) => string): { policy: number; nice: number } {
  const { nice, policy } = parseTaskStat(read(`/proc/self/task/${tid}/stat`))
  return { nice, policy }
}
