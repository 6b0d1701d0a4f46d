// Preloaded into a server under test (`node --import ./dist/bench/dns/loop-delay.js ...`): every
// second, one line on stderr with the event loop's delay over that second (p50/p99/max, ms), the
// garbage collector's pauses in it (minor and major: count and longest, ms; wall time, so a pause
// includes any time the thread was off its core) and the main thread's run-queue wait (ms: runnable
// but not on a core, from /proc/self/task/PID/schedstat), so a stall can be told apart: our work, a
// collection, or the scheduler.
import { readFileSync } from 'node:fs'
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'

const loop = monitorEventLoopDelay({ resolution: 1 })
loop.enable()
const gc = { minor: 0, minorMax: 0, major: 0, majorMax: 0, total: 0 }
new PerformanceObserver((list) => {
  for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    gc.total += e.duration
    if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.minor++
      gc.minorMax = Math.max(gc.minorMax, e.duration)
    } else {
      gc.major++
      gc.majorMax = Math.max(gc.majorMax, e.duration)
    }
  }
}).observe({ entryTypes: ['gc'] })
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`
const waited = (): number => {
  try {
    return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[1]) / 1e6
  } catch {
    return NaN
  }
}
let lastWait = waited()
const ms = (ns: number): string => (ns / 1e6).toFixed(2)
setInterval(() => {
  const w = waited()
  process.stderr.write(
    `loop-delay pid ${process.pid} t ${Date.now()} p50 ${ms(loop.percentile(50))} p99 ${ms(loop.percentile(99))} ` +
      `max ${ms(loop.max)} minor ${gc.minor} minorMax ${gc.minorMax.toFixed(2)} major ${gc.major} ` +
      `majorMax ${gc.majorMax.toFixed(2)} gcTotal ${gc.total.toFixed(2)} runqWait ${(w - lastWait).toFixed(1)}\n`
  )
  lastWait = w
  loop.reset()
  gc.minor = gc.minorMax = gc.major = gc.majorMax = gc.total = 0
}, 1000).unref()
