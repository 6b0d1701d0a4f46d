/**
 * engine/cpu-priority, the face: the DNS threads' CPU priority (`proxy.realtime-priority`): SCHED_FIFO
 * through chrt, and a thread's scheduling policy read back from /proc; and background work (the RPZ
 * feeds' process) moved to SCHED_IDLE.
 */
export { parseTaskStat, raiseToRealtime } from './realtime.js'
export { SCHED_IDLE, moveToBackground } from './background.js'
