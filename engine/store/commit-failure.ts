/**
 * What a failed LMDB commit becomes. lmdb-js rejects a write whose commit failed with a generic
 * "Commit failed (see commitError for details)" and puts the cause (`No space left on device`, code
 * 28 = ENOSPC) on a second promise, `err.commitError`, which it rejects too: if nobody handles that
 * one, Node ends the process on the unhandled rejection. So every commit of the store awaits it here,
 * and a full file system becomes ENGINE_STORE_FULL: the write is refused, nothing of it is kept (the
 * transaction was not committed), and the next write, once there is room, commits as usual.
 */
import { EngineError } from '../errors.js'

const ENOSPC = 28
const EDQUOT = 122
const CAUSE_WAIT_MS = 5000

/** The error `err` (a commit's rejection) stands for, its `commitError` handled; ENGINE_STORE_FULL when the disk is full. */
export async function commitFailure(path: string, err: unknown): Promise<unknown> {
  const pending = (err as { commitError?: unknown } | null)?.commitError
  let cause: unknown = err
  if (pending instanceof Promise) {
    // Handled at once, whatever happens next; waited for a while only: lmdb-js rejects it right
    // after the write's own promise, but a failure without a status would leave it pending.
    const settled = pending.then(
      () => err,
      (reason: unknown) => reason
    )
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<unknown>((resolve) => {
      timer = setTimeout(() => resolve(err), CAUSE_WAIT_MS)
    })
    cause = await Promise.race([settled, late])
    clearTimeout(timer)
  }
  if (!isOutOfSpace(cause)) return err
  return new EngineError(
    'ENGINE_STORE_FULL',
    `the store at ${path} cannot take the write: the file system is full (${(cause as Error).message}); nothing was written`,
    { cause }
  )
}

/** ENOSPC or EDQUOT, as lmdb-js (a number) or Node (a string) reports it. */
function isOutOfSpace(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === ENOSPC || code === EDQUOT || code === 'ENOSPC' || code === 'EDQUOT'
}
