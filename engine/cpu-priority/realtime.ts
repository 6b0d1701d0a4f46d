/**
 * Real-time CPU priority for the process that answers DNS (`proxy.realtime-priority`).
 *
 * On a host where the statistics import (or anything else) shares the cores with the DNS server, a
 * query that arrives while the server's thread waits for a CPU waits with it: that wait, not the
 * server's work, is the tail measured in bench/results/2026-11-history.md ("DNS beside the import"). Under Linux's
 * SCHED_FIFO the thread takes a CPU as soon as it wakes, ahead of every normal task (the import at any
 * nice, builds, backups); the kernel's real-time throttling (sched_rt_runtime_us, 95% by default) still
 * leaves the rest of the machine 5% of each CPU if the server ever spins.
 *
 * Node has no binding for sched_setscheduler, so chrt (util-linux) makes the one system call, for every
 * thread the process has (`--all-tasks`); threads started later inherit the policy of the thread that
 * makes them. It needs root or CAP_SYS_NICE (systemd: `AmbientCapabilities=CAP_SYS_NICE`, or
 * `CPUSchedulingPolicy=fifo` in the unit instead of this key): without it the caller logs why and the
 * server answers at normal priority.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** SCHED_FIFO's number in /proc/<pid>/stat's policy field. */
export const SCHED_FIFO = 1

/** Moves every thread of process `pid` to SCHED_FIFO at `priority` (1-99); rejects with chrt's reason. */
export function raiseToRealtime(priority: number, pid: number = process.pid): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('chrt', ['--fifo', '--all-tasks', '--pid', String(priority), String(pid)], (err, _out, stderr) => {
      if (err === null) resolve()
      else reject(new Error(stderr.trim() || err.message))
    })
  })
}

/** A thread's scheduling from its /proc/<pid>/task/<tid>/stat line: policy number, nice and real-time priority. */
export function parseTaskStat(stat: string): { policy: number; nice: number; rtPriority: number } {
  // Fields after the command's closing parenthesis start at field 3: nice is field 19, rt_priority 40, policy 41.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { nice: Number(rest[16]), rtPriority: Number(rest[37]), policy: Number(rest[38]) }
}

/** Scheduling policy and real-time priority of a thread, from /proc (`task` defaults to the process's main thread). */
export function schedulingOf(pid: number, task: number = pid): { policy: number; rtPriority: number } {
  const { policy, rtPriority } = parseTaskStat(readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8'))
  return { policy, rtPriority }
}
