/**
 * The statistics store's tiers, in one table: what each holds, at what grain, sorted how, made from what,
 * when its maintenance step is due, and how long it is kept. The import names the tables it writes from it,
 * the maintenance (./maintenance.ts) reads its due times, and the reports find their tables by it
 * (`tableOf`): no other place spells a table name or parses one. docs/design/statistics.md shows this
 * table (a test holds the two together); docs/statistics.md is the operator's page.
 *
 * A tier's tables are partitions: one per number (UTC hour, local day, Monday of a week, first day of a
 * month, as days since 1970-01-01), each dropped whole by retention; no row is ever deleted one by one.
 */

const HOUR_MS = 3_600_000
const MINUTE_MS = 60_000

export type TierName = 'raw' | 'day' | 'week' | 'month'

export interface Tier {
  readonly name: TierName
  /** Each kind of table of the tier and its name's prefix (the partition's number follows it). */
  readonly tables: Readonly<Record<string, string>>
  /** What one partition covers. */
  readonly grain: string
  /** The order of a partition's rows once its maintenance has run: what keeps one user's rows in a few row groups. */
  readonly sortKey: string
  /** Where its rows come from. */
  readonly source: string
  /** When its maintenance step is due, in words; the numbers are `due`. */
  readonly when: string
  readonly due: {
    /** A partition is taken once its period has been over this long (late files of a fleet arrive). */
    readonly graceMs?: number
    /** The step runs at most this often per store (for a partition still being written, or a round). */
    readonly everyMs: number
  }
  /** How long it is kept, and the config key that says so. */
  readonly retention: string
}

export const TIERS = [
  {
    name: 'raw',
    tables: { rows: 'rawi_', users: 'rawusers_', hosts: 'rawhosts_', addrs: 'rawaddrs_', legacy: 'raw_' },
    grain: 'UTC hour',
    sortKey: 'uid, created',
    source: 'closed query-log files (the import)',
    when: 'raw sort: a finished hour with 50,000 unsorted rows at once, the hour being written every 10 min',
    due: { everyMs: 10 * MINUTE_MS },
    retention: '`stats.raw-retention-hours` (24): dropped once the whole hour is older'
  },
  {
    name: 'day',
    tables: { hours: 'hours_', names: 'names_' },
    grain: 'local day',
    sortKey: 'user, hour / user, host',
    source: 'closed query-log files (the import), partial counts',
    when: 'compaction: after its last write; today every 10 min, or after 1 min once its partials outnumber its compacted rows',
    due: { everyMs: 10 * MINUTE_MS },
    retention: '`stats.retention-months` (3), or folded into its week first'
  },
  {
    name: 'week',
    tables: { hours: 'whours_', names: 'wnames_' },
    grain: 'local week from Monday',
    sortKey: 'user, day',
    source: 'day',
    when: 'fold: a day over for 1 h, one round every hour',
    due: { graceMs: HOUR_MS, everyMs: HOUR_MS },
    retention: '`stats.retention-months`: dropped once its last day is out'
  },
  {
    name: 'month',
    tables: { hours: 'mhours_', names: 'mnames_' },
    grain: 'calendar month',
    sortKey: 'user, day, hour / user, day, host',
    source: 'week',
    when: 'month build: every week overlapping it over for 1 h and folded, checked every 10 min',
    due: { graceMs: HOUR_MS, everyMs: 10 * MINUTE_MS },
    retention: '`stats.retention-months`: dropped once its last day is out'
  }
] as const satisfies readonly Tier[]

type Tiers = typeof TIERS
type TierOf<N extends TierName> = Extract<Tiers[number], { name: N }>
/** The kinds of table of tier `N`. */
export type TableKind<N extends TierName> = keyof TierOf<N>['tables'] & string

/** The tier named `name`. */
export function tier<N extends TierName>(name: N): TierOf<N> {
  return TIERS.find((t) => t.name === name) as TierOf<N>
}

/** The name of tier `name`'s table of kind `kind` for partition `n`. */
export function tableName<N extends TierName>(name: N, kind: TableKind<N>, n: number): string {
  return `${(tier(name).tables as Record<string, string>)[kind]}${n}`
}

/** A table of a tier, as `tableOf` reads its name. */
export interface TierTable {
  readonly tier: TierName
  readonly kind: string
  /** The partition's number. */
  readonly n: number
}

const DIGITS = /^\d+$/

/**
 * The tier, kind and partition of the table named `name`; undefined for every other table (the ledger,
 * meta, a copy being built, `__c` or `__build`).
 */
export function tableOf(name: string): TierTable | undefined {
  for (const t of TIERS)
    for (const [kind, prefix] of Object.entries(t.tables)) {
      if (name.startsWith(prefix) && DIGITS.test(name.slice(prefix.length)))
        return { tier: t.name, kind, n: Number(name.slice(prefix.length)) }
    }
  return undefined
}

/** The tier table as the design page shows it: one row per tier (docs/design/statistics.md). */
export function tierRows(): string[][] {
  return TIERS.map((t) => [
    t.name,
    Object.values(t.tables)
      .map((p) => `\`${p}<n>\``)
      .join(', '),
    t.grain,
    t.sortKey,
    t.source,
    t.when,
    t.retention
  ])
}

/**
 * A SQL regular expression (DuckDB's `regexp_full_match`) of the tables of the given tiers and kinds: what a
 * report's catalog fingerprint covers, spelt from this table like every table name.
 */
export function tablePatternSql(of: ReadonlyArray<readonly [TierName, string]>): string {
  const prefixes = of.map(([name, kind]) => (tier(name).tables as Record<string, string>)[kind]!)
  return `(${prefixes.join('|')})[0-9]+`
}
