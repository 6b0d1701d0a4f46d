/**
 * The statistics store as the api role holds it: a `StatsDb` that is allowed to be unavailable. For
 * an ISP the statistics are not the service, so a store that cannot be opened (a damaged
 * `stats.duckdb`, another process holding it, a full disk at the open) or that DuckDB invalidated
 * after a fatal error (a checkpoint on a full disk: "database has been invalidated because of a
 * previous fatal error", which every later statement repeats until the file is opened again) must
 * not take the role down, nor stay broken until someone restarts it. Meanwhile every call answers
 * ENGINE_STATS_UNAVAILABLE naming the reason (the API: 503 `API_STATS_UNAVAILABLE`), and the store is
 * opened again by itself, after a backoff doubling from `firstRetryMs` to `maxRetryMs`.
 */
import { EngineError } from '../errors.js'
import { failpointNumber } from '../failpoints.js'
import { join } from 'node:path'
import { DB_FILE, openStatsDb, type StatsDb, type StatsDbOptions } from './db.js'

export interface ReopeningStatsDb extends StatsDb {
  /** Why the store cannot be used now, or undefined while it works. */
  readonly unavailable: string | undefined
}

export interface ReopenHooks {
  /** The store became unavailable (at the open, or invalidated): once per outage. */
  onUnavailable?(reason: string): void
  /** The store works again after an outage. */
  onAvailable?(): void
  firstRetryMs?: number
  maxRetryMs?: number
}

// DuckDB's node client gives its errors no code or type, only the message: matched here, and only
// here. A FATAL error (a checkpoint that failed) invalidates the database; later statements then say so.
const INVALIDATED = /database has been invalidated|^FATAL Error/i

/** True when `err` says DuckDB invalidated the database: the open instance is of no more use. */
export function isInvalidated(err: unknown): boolean {
  return err instanceof Error && (INVALIDATED.test(err.message) || isInvalidated(err.cause))
}

/** True when DuckDB refuses a statement on `db` because it invalidated the database. */
async function invalidated(db: StatsDb): Promise<boolean> {
  return await db
    .read((c) => c.run('SELECT 1'))
    .then(
      () => false,
      (err: unknown) => isInvalidated(err)
    )
}

/**
 * The delay before the next open after `failures` failed ones: doubling from `firstRetryMs`, capped at
 * `maxRetryMs` (also the ClickHouse store's schema retries, engine/clickhouse/reading.ts).
 */
export function reopenBackoff(hooks: ReopenHooks): (failures: number) => number {
  // The `stats.reopen-ms` failpoint: every retry after that many ms (tests, which cannot wait a minute).
  const fixed = failpointNumber('stats.reopen-ms') ?? 0
  const firstRetryMs = fixed > 0 ? fixed : (hooks.firstRetryMs ?? 1000)
  const maxRetryMs = fixed > 0 ? fixed : (hooks.maxRetryMs ?? 60_000)
  return (failures) => Math.min(maxRetryMs, firstRetryMs * 2 ** Math.min(failures, 20))
}

/**
 * Opens the statistics store at `path`, and opens it again whenever it cannot be used. `ready`
 * resolves after the first attempt, whether it worked or not (`unavailable` says).
 */
export function openReopeningStatsDb(
  path: string,
  options: StatsDbOptions = {},
  hooks: ReopenHooks = {}
): ReopeningStatsDb {
  const retryDelay = reopenBackoff(hooks)
  let inner: StatsDb | undefined
  let reason: string | undefined
  let failures = 0
  let timer: NodeJS.Timeout | undefined
  let closed = false
  // Closes of given-up instances, awaited by `close` (their files must be shut before, say, an unmount) and
  // by the next open: never two instances of the file at once (DuckDB does not stop a second open in one
  // process, and the one given up, ending work begun before its outage, would write beside the new one).
  const closing = new Set<Promise<void>>()

  const giveUp = (db: StatsDb, why: string): void => {
    if (inner !== db) return // already replaced
    inner = undefined
    if (reason === undefined) hooks.onUnavailable?.(why)
    reason = why
    const done = db.close().catch(() => {})
    closing.add(done)
    void done.finally(() => closing.delete(done))
    const delay = retryDelay(failures)
    failures++
    timer = setTimeout(() => void attempt(), delay)
    timer.unref()
  }
  const attempt = async (): Promise<void> => {
    await Promise.all(closing)
    if (closed) return
    const db = openStatsDb(path, options)
    inner = db
    try {
      await db.ready
    } catch (err) {
      giveUp(db, (err as Error).message)
      return
    }
    if (closed) return await db.close()
    failures = 0
    if (reason !== undefined) {
      reason = undefined
      hooks.onAvailable?.()
    }
  }
  const ready = attempt()

  const current = (): StatsDb => {
    if (closed) throw new EngineError('ENGINE_STORE_OPEN', 'the statistics store is closed')
    if (reason !== undefined || inner === undefined)
      throw new EngineError('ENGINE_STATS_UNAVAILABLE', `the statistics store is unavailable: ${reason ?? 'opening'}`)
    return inner
  }
  // `call` on the store now open; its invalidation closes it and schedules the reopen. The store itself is
  // asked: work begun on an instance given up may end (and fail) in a call on this one.
  const using = async <T>(call: (db: StatsDb) => Promise<T>): Promise<T> => {
    await ready
    const db = current()
    try {
      return await call(db)
    } catch (err) {
      if (!isInvalidated(err) || !(await invalidated(db))) throw err
      giveUp(db, (err as Error).message)
      throw new EngineError('ENGINE_STATS_UNAVAILABLE', `the statistics store is unavailable: ${reason!}`, {
        cause: err
      })
    }
  }
  const close = async (): Promise<void> => {
    closed = true
    clearTimeout(timer)
    await ready
    await inner?.close()
    await Promise.all(closing)
  }
  return delegating(path, ready, using, { unavailable: () => reason, boost: (on) => inner?.boost(on), close })
}

/** Every call of the store through `using` (the instance open now), the rest from `state`. */
function delegating(
  path: string,
  ready: Promise<void>,
  using: <T>(call: (db: StatsDb) => Promise<T>) => Promise<T>,
  state: { unavailable: () => string | undefined; boost: StatsDb['boost']; close: () => Promise<void> }
): ReopeningStatsDb {
  return {
    path,
    file: join(path, DB_FILE),
    ready,
    get unavailable() {
      return state.unavailable()
    },
    read: (fn) => using((db) => db.read(fn)),
    write: (fn) => using((db) => db.write(fn)),
    writeOn: (c, fn) => using((db) => db.writeOn(c, fn)),
    background: (fn) => using((db) => db.background(fn)),
    boost: state.boost,
    close: state.close
  }
}
