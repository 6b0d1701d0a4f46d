/**
 * The raw layout before (engine/stats/raw-layout.ts has the one now): stores written by an older version
 * hold `raw_<hour>` tables (seq, created, user, ..., strings), one row per query with its strings inline.
 * They are read alongside the current layout (`rawHourSources`, `userRawRows` in ../raw-layout.ts call in
 * here) until retention drops them a day after an upgrade, and are never written again but by
 * `filterd stats-migrate` of an LMDB store (./migrate.ts). Removed in 0.3.0 with it (./README.md).
 */
import { tableName } from '../tiers.js'

/** The layout before (a store written by an older version, or migrated from LMDB). */
export const legacyRawTable = (hour: number): string => tableName('raw', 'legacy', hour)

/** The layout before, as older versions made it (LMDB migration writes it; tests make old stores with it). */
export function legacyRawTableSql(name: string): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${name} (seq BIGINT, created BIGINT, "user" VARCHAR, nxdomain BOOLEAN, address VARCHAR, ` +
    'host VARCHAR, blockedhost VARCHAR, reason VARCHAR, cats VARCHAR, blockedcats VARCHAR)'
  )
}

/** The old layout's part of `rawHourSources` (its columns and `layout` 0, `ord` its seq), if the hour has that table. */
export function legacyRawHourSource(names: ReadonlySet<string>, hour: number, where: string): string | undefined {
  if (names.has(legacyRawTable(hour)))
    return (
      'SELECT created, "user", nxdomain, address, host, blockedhost, reason, cats, blockedcats, \'\' AS source, 0 AS layout, seq AS ord ' +
      `FROM ${legacyRawTable(hour)} WHERE ${where}`
    )
  return undefined
}

/**
 * The old layout's part of `userRawRows`: per hour of `hours` in that layout, the rows of user `$1` that
 * `when` selects, with the strings inline (NULL ids: nothing to resolve) and `tail`'s columns.
 */
export function legacyUserRawSources(
  names: ReadonlySet<string>,
  hours: readonly number[],
  when: string,
  tail: string
): string[] {
  return hours
    .filter((h) => names.has(legacyRawTable(h)))
    .map(
      (h) =>
        `SELECT created, nxdomain, address, host, NULL::INTEGER AS aid, NULL::INTEGER AS hid, ${h} AS h, ${tail} ` +
        `FROM (${legacyRawHourSource(names, h, `"user" = $1 AND ${when}`)})`
    )
}
