/**
 * The importer's JavaScript chunk path, the one before DuckDB read the CSV itself (engine/stats/importer.ts):
 * records parsed and summed in memory, then appended in one transaction per chunk with the file's ledger
 * row. Only two things still take it: a file an older importer left half-imported (its ledger offset is
 * not 0: `continueFile` goes on from there), and the Redis row stream's chunks an older host published,
 * drained after an upgrade (engine/replica/row-stream.ts, `applyRecords`). Removed in 0.3.0 (./README.md).
 */
import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import {
  decodeRow,
  parseRecords,
  type StatsRow,
  ALL_USERS,
  ANONYMOUS_USER,
  BLOCK_REASONS
} from '../../querylog/index.js'
import {
  SEQ_PER_CHUNK,
  hoursTable,
  hoursTableSql,
  metaGet,
  metaPut,
  namesTable,
  namesTableSql,
  progressOf,
  putProgress,
  retentionOf,
  type ImportProgress,
  type StatsDb
} from '../db.js'
import { CHUNK_ROWS, type Ctx } from '../import-context.js'
import { insertRawHour } from '../raw-layout.js'
import { transaction } from '../transaction.js'
import { HOUR_MS, ReportTime } from '../time.js'

/** The JS path's stage of one hour's raw rows (a temporary table, inside the chunk's transaction). */
const RAW_STAGE = 'import_raw_stage'
const READ_BYTES = 4 * 1024 * 1024

export /** Continues a file from `from`, the offset its progress record holds, in chunks of parsed records. */
async function continueFile(
  ctx: Ctx,
  dir: string,
  name: string,
  from: number
): Promise<{ rows: number; skipped: number } | undefined> {
  const path = join(dir, name)
  let rows = 0
  let skipped = 0
  let offset = from
  const fh = await open(path, 'r')
  try {
    const size = (await fh.stat()).size
    let buf = Buffer.allocUnsafe(Math.min(READ_BYTES, Math.max(size, 1)))
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, offset)
      const atEof = offset + bytesRead >= size
      const text = buf.toString('latin1', 0, bytesRead)
      const records: string[][] = []
      const end = parseRecords(text, 0, ctx.chunkRows, records)
      if (records.length === 0 && !atEof) {
        buf = Buffer.allocUnsafe(buf.length * 2) // one record longer than the buffer
        continue
      }
      let newOffset = offset + end
      let chunkSkipped = 0
      if (records.length === 0 && newOffset < size) {
        // A crashed writer's half-written last line: nothing after it will ever complete it.
        newOffset = size
        chunkSkipped++
      }
      const done = newOffset >= size
      if (chunkSkipped > 0) {
        ctx.logger?.warn(
          { file: name, offset, bytes: newOffset - offset },
          'statistics file ends in a truncated line (a writer stopped mid-row): that partial row is skipped, every complete row is imported'
        )
      }
      const applied = await applyChunk(ctx, name, offset, newOffset, done, records, chunkSkipped)
      if (applied.kind === 'moved') {
        // Another importer got there first; continue from its progress.
        if (applied.progress.done) break
        offset = applied.progress.offset
        continue
      }
      rows += applied.rows
      skipped += applied.skipped
      ctx.onChunk?.('after-commit', ctx.rowsSoFar)
      offset = newOffset
      if (done) break
    }
  } finally {
    await fh.close()
  }
  await rm(path, { force: true })
  return { rows, skipped }
}

/**
 * Applies parsed CSV records of `name` (bytes `from`..`to`) exactly once through the same ledger as a
 * local import: nothing happens unless the ledger's offset for `name` is `from`. Hosts sharing Redis
 * apply every host's chunks this way (engine/replica/row-stream.ts), under the name `<host>/<file>`.
 */
export async function applyRecords(
  db: StatsDb,
  timeZone: string,
  name: string,
  from: number,
  to: number,
  done: boolean,
  records: string[][],
  now: () => number = Date.now
): Promise<boolean> {
  const ctx: Ctx = {
    db,
    time: new ReportTime(timeZone),
    now,
    chunkRows: CHUNK_ROWS,
    onChunk: undefined,
    logger: undefined,
    warned: new Set(),
    rowsSoFar: 0
  }
  return (await applyChunk(ctx, name, from, to, done, records, 0)).kind === 'applied'
}

type ChunkOutcome =
  | { kind: 'applied'; rows: number; skipped: number; progress: ImportProgress }
  | { kind: 'moved'; progress: ImportProgress }

const SEP = '\u0000'

/** A chunk summed in memory, per partition, so that the transaction only appends. */
interface ChunkSums {
  /** Per local day: `user SEP utcHour` → [requests, blocks]. */
  readonly hours: Map<number, Map<string, [number, number]>>
  /** Per local day: `user SEP host` → [requests, nxdomain, blocks, cats of the last row]. */
  /** Per local day, per user SEP name SEP blocking categories (the partial's key): requests, nx, blocks, cats, last row. */
  readonly names: Map<number, Map<string, [number, number, number, string, number]>>
  /** Per UTC hour: the raw rows to keep. */
  readonly raws: Map<number, StatsRow[]>
  rows: number
  skipped: number
}

function inPartition<V>(map: Map<number, Map<string, V>>, part: number): Map<string, V> {
  let m = map.get(part)
  if (m === undefined) map.set(part, (m = new Map<string, V>()))
  return m
}

function sumChunk(ctx: Ctx, records: string[][], alreadySkipped: number): ChunkSums {
  const { time } = ctx
  const now = ctx.now()
  const kept = retentionOf(ctx.db)
  const keepDay = time.aggregateRetentionStart(now, kept.months)
  const keepRaw = now - kept.rawMs
  const sums: ChunkSums = { hours: new Map(), names: new Map(), raws: new Map(), rows: 0, skipped: alreadySkipped }
  for (const fields of records) {
    const row = decodeRow(fields)
    if (row === undefined) {
      if (fields[0] !== 'created') sums.skipped++ // the header line is not a row
      continue
    }
    sums.rows++
    const user = row.user === '' ? ANONYMOUS_USER : row.user
    row.user = user
    const day = time.dayOf(row.created)
    const hour = Math.floor(row.created / HOUR_MS)
    if (day >= keepDay) {
      const block = BLOCK_REASONS.has(row.reason) ? 1 : 0
      const nx = row.nxdomain ? 1 : 0
      const cats = row.cats.join(' ')
      const hours = inPartition(sums.hours, day)
      const names = inPartition(sums.names, day)
      // Each row counts for its user and for the whole server (ALL_USERS, the console's overview).
      for (const u of [user, ALL_USERS]) {
        const hk = u + SEP + hour
        const h = hours.get(hk)
        if (h === undefined) hours.set(hk, [1, block])
        else {
          h[0]++
          h[1] += block
        }
        const nk = u + SEP + row.host + SEP + row.blockedCats.join(' ')
        const n = names.get(nk)
        if (n === undefined) names.set(nk, [1, nx, block, cats, sums.rows])
        else {
          n[0]++
          n[1] += nx
          n[2] += block
          n[3] = cats
          n[4] = sums.rows
        }
      }
    }
    if (row.created >= keepRaw) {
      let list = sums.raws.get(hour)
      if (list === undefined) sums.raws.set(hour, (list = []))
      list.push(row)
    }
  }
  return sums
}

/** The JS path's raw rows of one hour: appended to a stage in the CSV's shape, then laid out as the SQL import does. */
async function appendRaw(c: DuckDBConnection, hour: number, rows: readonly StatsRow[]): Promise<void> {
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${RAW_STAGE} (created BIGINT, "user" VARCHAR, nx BOOLEAN, address VARCHAR, host VARCHAR, ` +
      'blockedhost VARCHAR, reason VARCHAR, cats VARCHAR, blockedcats VARCHAR, source VARCHAR)'
  )
  try {
    const a = await c.createAppender(RAW_STAGE, 'main', 'temp')
    for (const r of rows) {
      a.appendBigInt(BigInt(r.created))
      a.appendVarchar(r.user)
      a.appendBoolean(r.nxdomain)
      a.appendVarchar(r.address)
      a.appendVarchar(r.host)
      a.appendVarchar(r.blockedHost)
      a.appendVarchar(r.reason)
      a.appendVarchar(r.cats.join(' '))
      a.appendVarchar(r.blockedCats.join(' '))
      a.appendVarchar(r.source ?? '')
      a.endRow()
    }
    a.closeSync()
    await insertRawHour(c, hour, RAW_STAGE, 'true')
  } finally {
    await c.run(`DROP TABLE IF EXISTS ${RAW_STAGE}`)
  }
}

async function appendSums(c: DuckDBConnection, sums: ChunkSums, chunk: number): Promise<void> {
  for (const [day, hours] of sums.hours) {
    const table = hoursTable(day)
    await c.run(hoursTableSql(table))
    const a = await c.createAppender(table)
    for (const [k, v] of hours) {
      const i = k.indexOf(SEP)
      a.appendVarchar(k.slice(0, i))
      a.appendInteger(Number(k.slice(i + 1)))
      a.appendBigInt(BigInt(v[0]))
      a.appendBigInt(BigInt(v[1]))
      a.endRow()
    }
    a.closeSync()
    await metaPut(c, `dirty.${day}`, 1)
  }
  for (const [day, names] of sums.names) {
    const table = namesTable(day)
    await c.run(namesTableSql(table))
    const a = await c.createAppender(table)
    const seq = BigInt(chunk) * BigInt(SEQ_PER_CHUNK)
    for (const [k, v] of names) {
      const [user, host, blockedCats] = k.split(SEP) as [string, string, string]
      a.appendVarchar(user)
      a.appendVarchar(host)
      a.appendBigInt(BigInt(v[0]))
      a.appendBigInt(BigInt(v[1]))
      a.appendBigInt(BigInt(v[2]))
      a.appendVarchar(v[3])
      a.appendBigInt(seq + BigInt(v[4]))
      a.appendVarchar(blockedCats)
      a.endRow()
    }
    a.closeSync()
  }
}

async function applyChunk(
  ctx: Ctx,
  name: string,
  from: number,
  to: number,
  done: boolean,
  records: string[][],
  alreadySkipped: number
): Promise<ChunkOutcome> {
  // Sum the chunk in memory first: the transaction then appends one partial row per key.
  const sums = sumChunk(ctx, records, alreadySkipped)
  const now = ctx.now()
  return await ctx.db.write(async (c): Promise<ChunkOutcome> => {
    return await transaction(c, async () => {
      const cur = await progressOf(c, name)
      if ((cur?.offset ?? 0) !== from || cur?.done === true) {
        return { kind: 'moved', progress: cur ?? { offset: 0, rows: 0, skipped: 0, done: false, updated: 0 } }
      }
      let seq = await metaGet(c, 'seq')
      for (const [hour, rows] of sums.raws) {
        await appendRaw(c, hour, rows)
        seq += rows.length
      }
      const chunk = (await metaGet(c, 'chunk')) + 1
      await appendSums(c, sums, chunk)
      await metaPut(c, 'seq', seq)
      await metaPut(c, 'chunk', chunk)
      const progress: ImportProgress = {
        offset: to,
        rows: (cur?.rows ?? 0) + sums.rows,
        skipped: (cur?.skipped ?? 0) + sums.skipped,
        done,
        updated: now
      }
      await putProgress(c, name, progress)
      ctx.rowsSoFar += sums.rows
      ctx.onChunk?.('in-txn', ctx.rowsSoFar)
      return { kind: 'applied', rows: sums.rows, skipped: sums.skipped, progress }
    })
  })
}
