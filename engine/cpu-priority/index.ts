/**
 * engine/cpu-priority, the face: the DNS threads' CPU priority (`proxy.realtime-priority`): SCHED_FIFO
 * through chrt, and a thread's scheduling policy read back from /proc.
 */
export { parseTaskStat, raiseToRealtime } from './realtime.js'
