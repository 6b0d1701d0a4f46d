/**
 * The statistics store's transactions, written once: every change of the store (an import, a fold, a
 * month's build and swap, a raw hour's sort, a migration, a segment applied) is one `transaction`, and a
 * report that must see one snapshot of several tables reads in one `readOnly`.
 *
 * Why the rollback's own failure is ignored: it follows a failure that is the one to report, and a
 * connection whose transaction DuckDB already aborted (a conflict, an invalidated database) refuses the
 * ROLLBACK too. A failpoint that stops the process inside `fn` stops it before COMMIT and ROLLBACK alike,
 * which is what a kill there does.
 */
import type { DuckDBConnection } from '@duckdb/node-api'

/** BEGIN, `fn`, COMMIT on `c`; when `fn` or the COMMIT fails, ROLLBACK and the failure thrown. */
export async function transaction<T>(c: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  await c.run('BEGIN TRANSACTION')
  try {
    const out = await fn()
    await c.run('COMMIT')
    return out
  } catch (err) {
    await c.run('ROLLBACK').catch(() => {})
    throw err
  }
}

/** BEGIN, `fn`, ROLLBACK on `c` whatever happens: `fn` reads one snapshot and writes nothing. */
export async function readOnly<T>(c: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  await c.run('BEGIN TRANSACTION')
  try {
    return await fn()
  } finally {
    await c.run('ROLLBACK')
  }
}
