/**
 * Fills DuckDB DataChunks column by column from JavaScript typed arrays and appends them whole
 * (`DuckDBAppender.appendDataChunk`): one native copy per column per 2,048 rows instead of one call
 * per value. The statistics import (engine/stats/csv-append.ts) writes its raw rows and partial
 * aggregates this way.
 *
 * `vector_get_data` hands JavaScript a copy of a vector's memory, not a view, so each column is built
 * in an ArrayBuffer of ours and copied in at `flush` (`copy_data_to_vector`). A VARCHAR is DuckDB's
 * 16-byte `duckdb_string_t` (duckdb.h): a little-endian uint32 length, then up to 12 bytes inline
 * (zero-padded); a longer string is a length, a prefix and a pointer into the vector's own string
 * heap, which only DuckDB can fill: those go through `vector_assign_string_element_len` after the
 * copy. Strings are bytes as they are (the CSV's UTF-8); the caller hands over valid UTF-8 only.
 */
import { DuckDBDataChunk, type DuckDBAppender, type DuckDBType } from '@duckdb/node-api'
import duckdb from '@duckdb/node-bindings'

/** Rows per DataChunk: DuckDB's vector size. */
export const CHUNK_CAPACITY = 2048

/** How a column's values are laid out: 64-bit and 32-bit integers, a boolean byte, a string. */
export type ColumnKind = 'i64' | 'i32' | 'bool' | 'str'

const WIDTH: Record<ColumnKind, number> = { i64: 8, i32: 4, bool: 1, str: 16 }
const TWO_32 = 4_294_967_296
const INLINE_MAX = 12

export class ChunkWriter {
  private readonly chunk: DuckDBDataChunk
  private readonly buffers: ArrayBuffer[]
  private readonly bytes: Uint8Array[]
  private readonly words: Int32Array[]
  private readonly views: DataView[]
  // Strings longer than 12 bytes, assigned after the copy: column, row, and where their bytes are.
  private readonly longCol: number[] = []
  private readonly longRow: number[] = []
  private readonly longSrc: Uint8Array[] = []
  private readonly longStart: number[] = []
  private readonly longEnd: number[] = []
  /** Rows filled so far. */
  rows = 0

  constructor(
    types: readonly DuckDBType[],
    private readonly kinds: readonly ColumnKind[]
  ) {
    this.chunk = DuckDBDataChunk.create(types)
    this.buffers = kinds.map((k) => new ArrayBuffer(WIDTH[k] * CHUNK_CAPACITY))
    this.bytes = this.buffers.map((b) => new Uint8Array(b))
    this.words = this.buffers.map((b) => new Int32Array(b, 0, b.byteLength >> 2))
    this.views = this.buffers.map((b) => new DataView(b))
  }

  get full(): boolean {
    return this.rows === CHUNK_CAPACITY
  }

  /** A non-negative safe integer (ms, counts, seq) into an i64 column. */
  setInt64(col: number, row: number, n: number): void {
    const w = this.words[col]!
    const hi = Math.floor(n / TWO_32)
    w[2 * row] = n - hi * TWO_32
    w[2 * row + 1] = hi
  }

  setInt32(col: number, row: number, n: number): void {
    this.words[col]![row] = n
  }

  setBool(col: number, row: number, b: boolean): void {
    this.bytes[col]![row] = b ? 1 : 0
  }

  /** The bytes `src[start..end)` (UTF-8) into a string column. */
  setBytes(col: number, row: number, src: Uint8Array, start: number, end: number): void {
    const len = end - start
    const at = row * 16
    this.views[col]!.setUint32(at, len, true)
    if (len > INLINE_MAX) {
      this.longCol.push(col)
      this.longRow.push(row)
      this.longSrc.push(src)
      this.longStart.push(start)
      this.longEnd.push(end)
      return
    }
    const b = this.bytes[col]!
    for (let i = 0; i < len; i++) b[at + 4 + i] = src[start + i]!
    for (let i = 4 + len; i < 16; i++) b[at + i] = 0
  }

  /** Appends the rows filled so far (if any) and starts an empty chunk. */
  flush(appender: DuckDBAppender): void {
    if (this.rows === 0) return
    const raw = this.chunk.chunk
    for (let col = 0; col < this.kinds.length; col++) {
      duckdb.copy_data_to_vector(
        duckdb.data_chunk_get_vector(raw, col),
        0,
        this.buffers[col]!,
        0,
        WIDTH[this.kinds[col]!] * this.rows
      )
    }
    for (let i = 0; i < this.longCol.length; i++) {
      const s = this.longSrc[i]!.subarray(this.longStart[i], this.longEnd[i])
      duckdb.vector_assign_string_element_len(duckdb.data_chunk_get_vector(raw, this.longCol[i]!), this.longRow[i]!, s)
    }
    this.chunk.rowCount = this.rows
    appender.appendDataChunk(this.chunk)
    this.chunk.reset()
    this.longCol.length = 0
    this.longRow.length = 0
    this.longSrc.length = 0
    this.longStart.length = 0
    this.longEnd.length = 0
    this.rows = 0
  }
}
