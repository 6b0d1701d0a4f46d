/**
 * The statistics store: a DuckDB database (`<stats.db>/stats.duckdb`), a column store, apart from the
 * policy store so that an import never holds the policy writer (docs/contract.md, The store). docs/statistics.md describes it.
 *
 * Tables, each a partition that retention drops whole (no row is ever deleted one by one):
 *
 *   rawi_<utcHour>, rawusers_<utcHour>, rawhosts_<utcHour>
 *                   one row per query of that UTC hour (created, user and name as ids of the hour's
 *                   two dictionaries, nxdomain, address, blockedhost, reason, cats, blockedcats, source; cats
 *                   as the CSV spells them, space-separated): engine/stats/raw-layout.ts. Stores of
 *                   older versions also have raw_<utcHour> (strings and a seq), read alike. Dropped
 *                   once the whole hour is older than a day.
 *   hours_<day>     partial counts per user and UTC hour of the rows whose local date is `day`:
 *                   user, hour, requests, blocks. A day's total is the sum of its partition.
 *   names_<day>     partial counts per user, name and blocking categories of that local day: user,
 *                   host, requests, nxdomain, blocks, cats (of the name, last seen), seq (orders the
 *                   partials), blockedcats (the categories that blocked these rows, '' for rows no
 *                   category blocked; NULL in rows imported before the column: unknown).
 *                   Both day partitions are dropped after three months, or folded before that.
 *   whours_<week>, wnames_<week>
 *                   the folded days of a week, sorted by (user, day) (engine/stats/fold.ts).
 *   mhours_<month>, mnames_<month>
 *                   a finished month's days, moved out of its weeks (engine/stats/month-build.ts).
 *   files           the exactly-once ledger: per imported file name, offset, rows, skipped, done, updated.
 *   meta            counters (the raw-row sequence, the Redis stream position).
 *
 * Every import appends: the raw rows of a chunk, and one partial row per (user, hour) and per
 * (user, name) the chunk touched, summed in memory first. Reports sum the partials. Compaction
 * (engine/stats/importer.ts) rewrites a day's partitions as one row per key, sorted by user, so that
 * a user's report reads a few row groups (DuckDB's min/max zone maps skip the rest).
 *
 * One writer: DuckDB lets one process open the file read-write; the api role is that process (it
 * imports and serves the reports). Within it, writes are serialised (`write`), reads run on their
 * own connections beside them (MVCC: a report sees the last committed import).
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { EngineError } from '../errors.js'
import { rawHoursAmong } from './raw-layout.js'
import { tableName, tableOf, tablePatternSql } from './tiers.js'
import { threadPrioritizer, type StatsPriority } from './priority.js'
import { DEFAULT_RETENTION, type StatsRetention } from './time.js'

export interface ImportProgress {
  /** Bytes of the file whose rows are in the store. */
  offset: number
  /** Rows imported so far. */
  rows: number
  /** Records that did not parse (and the half-written last line of a crashed writer). */
  skipped: number
  done: boolean
  /** When this record last changed (ms). */
  updated: number
}

export interface StatsDbOptions {
  /** DuckDB's `memory_limit`, e.g. `512MB` (stats.duckdb-memory). */
  memoryLimit?: string
  /** DuckDB's worker threads (stats.duckdb-threads). */
  threads?: number
  /**
   * The CPU priority of the process's threads but the main one (stats.import-priority,
   * engine/stats/priority.ts); the api role sets it, default `normal`.
   */
  priority?: StatsPriority
  /** Told the first time a thread's priority could not be changed. */
  onPriorityError?: (err: Error) => void
  /** What retention keeps (stats.retention-months, stats.raw-retention-hours); default three months and a day. */
  retention?: StatsRetention
}

/** The retention a store was opened with (the defaults for a store that names none). */
export function retentionOf(db: Pick<StatsDb, 'retention'>): StatsRetention {
  return db.retention ?? DEFAULT_RETENTION
}

export interface StatsDb {
  /** The directory (`stats.db`). */
  readonly path: string
  /** What retention keeps; absent: DEFAULT_RETENTION (read it with `retentionOf`). */
  readonly retention?: StatsRetention
  /** The database file in it. */
  readonly file: string
  /** Resolves once the database is open and its schema made; rejects with ENGINE_STORE_OPEN. */
  readonly ready: Promise<void>
  /** Runs `fn` on a connection of its own (reports); the connection is closed after; `close` interrupts it and waits for it. */
  read<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T>
  /** Runs `fn` on the writer connection, after every write already queued (one writer at a time). */
  write<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T>
  /**
   * Runs `fn` on `c`, a connection of this store (from `background`), in the write queue like `write`:
   * for a write that needs that connection's temporary tables (the importer's stage, read beside the
   * writer while the batch before it writes). Writes stay one at a time. A connection this store did not
   * lend, or lent and took back, is refused (ENGINE_STORE_OPEN).
   */
  writeOn<T>(c: DuckDBConnection, fn: (c: DuckDBConnection) => Promise<T>): Promise<T>
  /**
   * Runs `fn` on a connection of its own, beside the writer, for long work that must not hold the write
   * queue (the sort of a raw hour, engine/stats/raw-sort.ts); `close` interrupts it and waits for it.
   */
  background<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T>
  /**
   * Lifts the store's threads from the background (`stats.import-priority: background`) to nice 0, or puts
   * them back: for a live file that waits too long (./live-boost.ts). Returns the kernel's refusal, once.
   */
  boost(on: boolean): Error | undefined
  close(): Promise<void>
}

export const DB_FILE = 'stats.duckdb'

const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS files (name VARCHAR PRIMARY KEY, "offset" BIGINT, rows BIGINT, skipped BIGINT, done BOOLEAN, updated BIGINT)',
  'CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value BIGINT)'
]

/**
 * Columns added to partitions after stores were written without them: the tables (their tiers and kinds,
 * as a pattern of the tier table) and the column (a VARCHAR, NULL in the rows before). The raw rows' `source` (the
 * reason's detail, engine/stats/raw-layout.ts) and the names' `blockedcats` (the categories that
 * blocked the rows of the partial, part of its key: the overview's blocks by category).
 */
const ADDED_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  [tablePatternSql([['raw', 'rows']]), 'source'],
  [
    tablePatternSql([
      ['day', 'names'],
      ['week', 'names'],
      ['month', 'names']
    ]),
    'blockedcats'
  ]
]

/**
 * Adds `column` (VARCHAR) to the tables matching `tables` that lack it, so that a store written before the
 * column existed takes the rows of this version in the same partitions. Run once at open: adding a column
 * rewrites no row, and there are a few dozen such tables at most (a day of raw hours, three months of names).
 */
async function addColumnWhereMissing(c: DuckDBConnection, tables: string, column: string): Promise<void> {
  const lacking = (
    await c.runAndReadAll(
      `SELECT t.table_name FROM duckdb_tables() t WHERE t.schema_name = 'main' AND t.database_name = current_database() ` +
        `AND regexp_full_match(t.table_name, '${tables}') AND NOT EXISTS (SELECT 1 FROM duckdb_columns() k ` +
        `WHERE k.table_oid = t.table_oid AND k.column_name = '${column}')`
    )
  ).getRows()
  for (const [name] of lacking) await c.run(`ALTER TABLE ${String(name)} ADD COLUMN ${column} VARCHAR`)
}

export const hoursTable = (day: number): string => tableName('day', 'hours', day)
export const namesTable = (day: number): string => tableName('day', 'names', day)

export function hoursTableSql(name: string): string {
  return `CREATE TABLE IF NOT EXISTS ${name} ("user" VARCHAR, hour INTEGER, requests BIGINT, blocks BIGINT)`
}
export function namesTableSql(name: string): string {
  return `CREATE TABLE IF NOT EXISTS ${name} ("user" VARCHAR, host VARCHAR, requests BIGINT, nxdomain BIGINT, blocks BIGINT, cats VARCHAR, seq BIGINT, blockedcats VARCHAR)`
}

/**
 * A names partial's `seq`: its import's chunk number times this, plus the place of its last row in the
 * import. A name's rows of one import may make several partials (one per blocking categories); the place
 * orders them, so that "the name's categories, last seen" (the greatest seq's) is one partial's, not a tie.
 * Partials of stores written before hold the chunk number alone, smaller than any of these: older still.
 */
export const SEQ_PER_CHUNK = 4_294_967_296

export type PartitionKind = 'raw' | 'hours' | 'names'

/** The names of the store's tables (one catalog query). */
export const TABLES_SQL =
  "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"

/** The partitions among the table names `names`, by kind and number, ascending. */
export function partitionsAmong(names: Iterable<string>): Record<PartitionKind, number[]> {
  const out: Record<PartitionKind, number[]> = { raw: [], hours: [], names: [] }
  const all = [...names]
  for (const name of all) {
    const t = tableOf(name)
    if (t?.tier === 'day') out[t.kind as PartitionKind].push(t.n)
  }
  for (const list of Object.values(out)) list.sort((a, b) => a - b)
  out.raw = rawHoursAmong(all) // either layout
  return out
}

/** The partitions of each kind that exist, by number (UTC hour for raw, either layout; local day otherwise), ascending. */
export async function partitions(c: DuckDBConnection): Promise<Record<PartitionKind, number[]>> {
  return partitionsAmong((await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0])))
}

/** A meta counter (0 when unset). */
export async function metaGet(c: DuckDBConnection, key: string): Promise<number> {
  const r = await c.runAndReadAll('SELECT value FROM meta WHERE key = $1', [key])
  const row = r.getRows()[0]
  return row === undefined ? 0 : Number(row[0])
}

export async function metaPut(c: DuckDBConnection, key: string, value: number): Promise<void> {
  await c.run('INSERT OR REPLACE INTO meta VALUES ($1, $2)', [key, BigInt(value)])
}

/** Several meta counters in one statement. */
export async function metaPutMany(
  c: DuckDBConnection,
  entries: ReadonlyArray<readonly [string, number]>
): Promise<void> {
  if (entries.length === 0) return
  const values = entries.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ')
  await c.run(
    `INSERT OR REPLACE INTO meta VALUES ${values}`,
    entries.flatMap(([k, v]) => [k, BigInt(v)])
  )
}

/** The ledger's record of `name`, if any. */
export async function progressOf(c: DuckDBConnection, name: string): Promise<ImportProgress | undefined> {
  const r = await c.runAndReadAll('SELECT "offset", rows, skipped, done, updated FROM files WHERE name = $1', [name])
  const row = r.getRows()[0]
  if (row === undefined) return undefined
  return {
    offset: Number(row[0]),
    rows: Number(row[1]),
    skipped: Number(row[2]),
    done: row[3] === true,
    updated: Number(row[4])
  }
}

export async function putProgress(c: DuckDBConnection, name: string, p: ImportProgress): Promise<void> {
  await putProgressMany(c, [[name, p]])
}

/** Several ledger records in one statement (a batch of files imported in one transaction). */
export async function putProgressMany(
  c: DuckDBConnection,
  records: ReadonlyArray<readonly [string, ImportProgress]>
): Promise<void> {
  if (records.length === 0) return
  const values = records.map((_, i) => `(${[1, 2, 3, 4, 5, 6].map((k) => `$${6 * i + k}`).join(', ')})`).join(', ')
  await c.run(
    `INSERT OR REPLACE INTO files VALUES ${values}`,
    records.flatMap(([name, p]) => [
      name,
      BigInt(p.offset),
      BigInt(p.rows),
      BigInt(p.skipped),
      p.done,
      BigInt(p.updated)
    ])
  )
}

/** The ledger's records of `names` that exist. */
export async function progressOfMany(
  c: DuckDBConnection,
  names: readonly string[]
): Promise<Map<string, ImportProgress>> {
  const out = new Map<string, ImportProgress>()
  if (names.length === 0) return out
  const r = await c.runAndReadAll(
    `SELECT name, "offset", rows, skipped, done, updated FROM files WHERE name IN (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
    [...names]
  )
  for (const row of r.getRows()) {
    out.set(String(row[0]), {
      offset: Number(row[1]),
      rows: Number(row[2]),
      skipped: Number(row[3]),
      done: row[4] === true,
      updated: Number(row[5])
    })
  }
  return out
}

/**
 * The settings of a DuckDB instance of the statistics work: `memory_limit` and `threads` as configured
 * (stats.duckdb-memory, stats.duckdb-threads), and the allocator's background thread. Without that thread,
 * the memory a large query frees (the sort of a raw hour, engine/stats/raw-sort.ts; an import's stage; a
 * report's sort) stays with the process until a later query's thread flushes it, outside `memory_limit`:
 * the api role's RSS kept the highest peak of its sorts and climbed with them (to 725 MiB in 5 minutes at
 * 5,000 q/s, bench/stats/api-memory.ts). With it, the freed memory goes back to the system within
 * seconds (engine/stats/memory-return.test.ts).
 */
export function instanceSettings(options: { memoryLimit?: string; threads?: number }): Record<string, string> {
  const settings: Record<string, string> = { allocator_background_threads: 'true' }
  if (options.memoryLimit !== undefined) settings.memory_limit = options.memoryLimit
  if (options.threads !== undefined) settings.threads = String(options.threads)
  return settings
}

async function openInstance(file: string, options: StatsDbOptions): Promise<DuckDBInstance> {
  return await DuckDBInstance.create(file, instanceSettings(options))
}

/**
 * The connections a store lent out (StatsDb.read, StatsDb.background), each run's promise, interrupted and
 * awaited at close: DuckDB keeps a database open while any of its connections is, and one still open after
 * `close` is a second instance of the file beside the next open (the api role opens it again after an
 * invalidation, engine/stats/reopening.ts), whose own checkpoint at its end writes its older view into the
 * file and deletes the newer instance's write-ahead log. A run that fails once the close interrupted it
 * fails with ENGINE_STORE_OPEN (the store is closed), the code its caller tells apart from a failure of the
 * work, since DuckDB's own interruption error has no code.
 */
function lentConnections(): {
  run<T>(c: DuckDBConnection, fn: (c: DuckDBConnection) => Promise<T>): Promise<T>
  /** True when `c` is one of the connections lent now. */
  owns(c: DuckDBConnection): boolean
  interruptAll(): Promise<void>
} {
  const running = new Map<Promise<unknown>, DuckDBConnection>()
  let interrupted = false
  return {
    run(c, fn) {
      const p = fn(c)
        .catch((err: unknown) => {
          if (!interrupted) throw err
          throw new EngineError(
            'ENGINE_STORE_OPEN',
            'the statistics store closed while a connection of it was in use',
            {
              cause: err
            }
          )
        })
        .finally(() => {
          running.delete(p)
          c.closeSync()
        })
      running.set(p, c)
      return p
    },
    owns: (c) => [...running.values()].includes(c),
    async interruptAll() {
      interrupted = true
      for (const c of running.values()) c.interrupt()
      await Promise.allSettled([...running.keys()])
    }
  }
}

/** The store's instance and its writer connection, with the schema made and brought up to date. */
async function openWithSchema(
  path: string,
  file: string,
  options: StatsDbOptions
): Promise<{ instance: DuckDBInstance; writer: DuckDBConnection }> {
  try {
    mkdirSync(path, { recursive: true })
    const instance = await openInstance(file, options)
    const writer = await instance.connect()
    for (const sql of SCHEMA) await writer.run(sql)
    for (const [tables, column] of ADDED_COLUMNS) await addColumnWhereMissing(writer, tables, column)
    return { instance, writer }
  } catch (err) {
    throw new EngineError(
      'ENGINE_STORE_OPEN',
      `cannot open the statistics store at ${file}: ${(err as Error).message}`,
      {
        cause: err
      }
    )
  }
}

/**
 * Opens (creating when needed) the statistics store in the directory `path`. Opening is asynchronous:
 * every call waits for it, and `ready` reports a failure (another process holding the file, a bad
 * setting) as ENGINE_STORE_OPEN.
 */
export function openStatsDb(path: string, options: StatsDbOptions = {}): StatsDb {
  const file = join(path, DB_FILE)
  let instance: DuckDBInstance | undefined
  let writer: DuckDBConnection | undefined
  // Before each use of the store: threads started since the last call are moved too.
  const prioritize = threadPrioritizer(options.priority ?? 'normal', options.onPriorityError)
  const ready = (async () => {
    ;({ instance, writer } = await openWithSchema(path, file, options))
    prioritize()
  })()
  ready.catch(() => {}) // reported to whoever waits on it
  let chain: Promise<unknown> = ready
  let closed = false
  let closing = false
  const lent = lentConnections()
  // The write queue: one write at a time, on the writer connection or the one given.
  const enqueue = <T>(c: DuckDBConnection | undefined, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> => {
    const p = chain.then(() => {
      if (closed) throw new EngineError('ENGINE_STORE_OPEN', 'the statistics store is closed')
      // A connection of another instance of the file (one given up since, the importer's stage read on
      // it): its write would go to that instance, beside this one's writer.
      if (c !== undefined && !lent.owns(c))
        throw new EngineError('ENGINE_STORE_OPEN', 'a write on a connection this statistics store did not lend')
      prioritize()
      return fn(c ?? writer!)
    })
    chain = p.catch(() => {})
    return p
  }
  return {
    path,
    file,
    ready,
    retention: options.retention ?? DEFAULT_RETENTION,
    async read(fn) {
      await ready
      if (closed || closing) throw new EngineError('ENGINE_STORE_OPEN', 'the statistics store is closed')
      prioritize()
      return await lent.run(await instance!.connect(), fn)
    },
    async background(fn) {
      await ready
      if (closed || closing) throw new EngineError('ENGINE_STORE_OPEN', 'the statistics store is closed')
      prioritize()
      return await lent.run(await instance!.connect(), fn)
    },
    write: (fn) => enqueue(undefined, fn),
    writeOn: enqueue,
    boost: (on) => prioritize.boost(on),
    async close() {
      if (closed || closing) return
      closing = true
      await lent.interruptAll()
      await chain.catch(() => {})
      closed = true
      if (writer !== undefined) {
        // A checkpoint folds the write-ahead log into the file, so the next open replays nothing.
        try {
          await writer.run('CHECKPOINT')
        } catch {
          /* another connection's transaction: the WAL stays, replayed at open */
        }
        writer.closeSync()
      }
      instance?.closeSync()
    }
  }
}
