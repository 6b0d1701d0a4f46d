/**
 * Background CPU priority for a process whose work must never take a core from the answers (the RPZ
 * feeds' process): every thread of this process is moved to SCHED_IDLE, which runs only on what no
 * other thread of the machine wants, and which any other task that wakes up takes the CPU from at once.
 * Measured against nice 19 on the ISP host (bench/dns/isp-host-refresh.sh): an IXFR of 50,000 changes
 * at nice 19 took 35-45% of a core in the NOTIFY's second and the DNS fronts lost as much; at SCHED_IDLE
 * it spread over 3 s of idle time and the fronts kept theirs. It still gets a sliver of a saturated
 * machine (CFS gives SCHED_IDLE a weight of 3 against a normal task's 1,024), so it finishes, later.
 *
 * Linux keeps a policy and a nice value per thread, and a thread started later takes those of the
 * thread that starts it: so the threads there are now (the main one, V8's and libuv's) are moved, and
 * every later one inherits. SCHED_IDLE has no Node binding: chrt (util-linux) makes the one system
 * call for every thread (`--all-tasks`); it needs no privilege. Without chrt every thread is moved to
 * nice 19 (a weight of 15) instead, which also needs none.
 */
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** The nice value of background work where SCHED_IDLE cannot be had. */
const BACKGROUND_NICE = 19

/** SCHED_IDLE's number in /proc/<pid>/stat's policy field. */
export const SCHED_IDLE = 5

/**
 * Moves every thread of this process to SCHED_IDLE, or to nice 19 when chrt fails; resolves with which,
 * and chrt's reason when it failed.
 */
export async function moveToBackground(): Promise<{ policy: 'idle' | 'nice'; why?: string }> {
  lowerNice(BACKGROUND_NICE)
  return await new Promise((resolve) => {
    execFile('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], (err, _out, stderr) => {
      if (err === null) resolve({ policy: 'idle' })
      else resolve({ policy: 'nice', why: stderr.trim() || err.message })
    })
  })
}

/** Every thread of this process to `nice` (a thread that ended meanwhile is skipped). */
function lowerNice(nice: number): void {
  let tasks: string[]
  try {
    tasks = readdirSync('/proc/self/task')
  } catch {
    setPriority(nice) // not Linux: the process
    return
  }
  for (const tid of tasks) {
    try {
      setPriority(Number(tid), nice)
    } catch {
      // The thread ended between the read and the call.
    }
  }
}
