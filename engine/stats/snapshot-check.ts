/**
 * The check of a report's one-statement path (reports.ts, "Reports in one statement"): the statement selects,
 * as its last column, a value computed in its own snapshot (the fingerprint of the tables its SQL was made
 * from), and the answer stands only if that value is the expected one.
 */
import type { DuckDBConnection } from '@duckdb/node-api'

/**
 * Whether `valueSql` is `expected` in the snapshot of the transaction `c` is in: read from the last column of
 * `found` (the rows of the statement that selected it), or, when there is no row to carry it, by itself in the
 * same transaction (so the same snapshot).
 */
export async function snapshotHolds(
  c: DuckDBConnection,
  found: readonly unknown[][],
  valueSql: string,
  expected: unknown
): Promise<boolean> {
  const values =
    found.length > 0
      ? found.map((r) => r[r.length - 1])
      : (await c.runAndReadAll(`SELECT ${valueSql}`)).getRows().map((r) => r[0])
  return values.every((v) => v === expected)
}
