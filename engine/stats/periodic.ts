/**
 * A job that runs every `intervalMs` (the first run at once) and when woken, never two runs at once
 * in the process: the statistics importer, the segment producer and the segment applier. Ticks and
 * wake-ups that arrive during a run fold into one run after it, so a slow run never queues more
 * than one behind it. `runNow()` (tests, `filterd stats-import`) waits for the run going and then
 * runs, and gives its result or error.
 */
export interface PeriodicJob<T> {
  runNow: () => Promise<T>
  /** Asks for a run soon (a closed file appeared); nothing is queued beyond one. */
  wake: () => void
  /** Stops the timer and waits for the run going. */
  close(): Promise<void>
}

export function startPeriodicJob<T>(
  work: () => Promise<T>,
  intervalMs: number,
  report: { done: (result: T) => void; failed: (err: unknown) => void }
): PeriodicJob<T> {
  let chain: Promise<unknown> = Promise.resolve()
  let closed = false
  let running = false
  let again = false
  const runNow = (): Promise<T> => {
    const p = chain.then(work)
    chain = p.catch(() => {})
    return p
  }
  const wake = (): void => {
    if (closed) return
    if (running) {
      again = true
      return
    }
    running = true
    runNow()
      .then(report.done, report.failed)
      .finally(() => {
        running = false
        if (again) {
          again = false
          wake()
        }
      })
  }
  const timer = intervalMs > 0 ? setInterval(wake, intervalMs) : undefined
  if (timer !== undefined) {
    timer.unref()
    setImmediate(wake)
  }
  return {
    runNow,
    wake,
    async close() {
      closed = true
      if (timer !== undefined) clearInterval(timer)
      await chain
    }
  }
}
