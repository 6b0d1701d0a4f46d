/**
 * Loaded into every role of bench/stats/api-memory.ts's `filterd all` (NODE_OPTIONS=--import): in the
 * api role only, writes every 10 s to FILTERD_MEMORY_PROBE process.memoryUsage() and what DuckDB's
 * buffer manager holds (`duckdb_memory()`, by tag, of the statistics store's instance, caught as
 * DuckDBInstance.create makes it), so the benchmark can tell the V8 heap, DuckDB's buffer manager and the
 * rest of the native memory apart in the role's RSS. Not a product module.
 */
import { appendFileSync, writeFileSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'

const file = process.env.FILTERD_MEMORY_PROBE
if (file !== undefined && process.argv[2] === 'api') {
  let instance: DuckDBInstance | undefined
  const create = DuckDBInstance.create.bind(DuckDBInstance)
  DuckDBInstance.create = async (...args: Parameters<typeof DuckDBInstance.create>): Promise<DuckDBInstance> => {
    const made = await create(...args)
    instance ??= made
    return made
  }
  const duckdb = async (): Promise<Record<string, number>> => {
    if (instance === undefined) return {}
    const c = await instance.connect()
    try {
      const rows = (await c.runAndReadAll('SELECT tag, memory_usage_bytes FROM duckdb_memory()')).getRows()
      return Object.fromEntries(rows.filter((r) => Number(r[1]) > 0).map((r) => [String(r[0]), Number(r[1])]))
    } finally {
      c.closeSync()
    }
  }
  // FILTERD_MEMORY_PROBE_GC=1: a full collection before each report, and the RSS before it: what garbage
  // JavaScript objects held (the native memory of DuckDB results whose wrappers V8 has not collected yet).
  let gc: (() => void) | undefined
  if (process.env.FILTERD_MEMORY_PROBE_GC === '1') {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  // FILTERD_MEMORY_PROBE_STATEMENTS=1: every second, DuckDB's sort and hash-table memory with the statements
  // in flight then (their first 100 characters), one JSON line each in <probe file>.statements: which
  // statements the `ORDER_BY` peaks belong to.
  if (process.env.FILTERD_MEMORY_PROBE_STATEMENTS === '1') traceStatements(`${file}.statements`, duckdb)
  setInterval(() => {
    void duckdb()
      .catch(() => ({}))
      .then((tags) => {
        const before = process.memoryUsage.rss()
        gc?.()
        writeFileSync(file, JSON.stringify({ ...process.memoryUsage(), rssBeforeGc: before, duckdb: tags }))
      })
  }, 10_000).unref()
}

/** Wraps DuckDBConnection's run and runAndReadAll to know the statements in flight; samples `tags` every second. */
function traceStatements(out: string, tags: () => Promise<Record<string, number>>): void {
  const inFlight = new Map<number, { sql: string; since: number }>()
  let next = 0
  for (const name of ['run', 'runAndReadAll'] as const) {
    const proto = DuckDBConnection.prototype as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>
    const original = proto[name]!
    proto[name] = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const id = next++
      inFlight.set(id, { sql: String(args[0]).replace(/\s+/g, ' ').slice(0, 100), since: Date.now() })
      try {
        return await original.apply(this, args)
      } finally {
        inFlight.delete(id)
      }
    }
  }
  const MiB = 1024 * 1024
  setInterval(() => {
    void tags()
      .catch(() => ({}))
      .then((t) => {
        const big = Object.entries(t)
          .filter(([, v]) => v >= 8 * MiB)
          .map(([k, v]) => `${k} ${Math.round(v / MiB)}`)
        const now = Date.now()
        const sql = [...inFlight.values()]
          .filter((s) => !s.sql.includes('duckdb_memory()'))
          .map((s) => `${Math.round((now - s.since) / 100) / 10}s ${s.sql}`)
        appendFileSync(
          out,
          JSON.stringify({
            at: new Date(now).toISOString(),
            rss: Math.round(process.memoryUsage.rss() / MiB),
            tags: big,
            sql
          }) + '\n'
        )
      })
  }, 1000).unref()
}
