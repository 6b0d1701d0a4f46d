/**
 * A closed statistics file on its way into DuckDB (the importer, engine/stats/importer.ts; the sync
 * role's segments, engine/stats/segment.ts): checked record by record (engine/stats/csv-check.ts),
 * read from a copy without what is left out, or moved to `quarantine/` beside it.
 *
 * - A file cut mid-record (a crashed writer, a full disk) and a file with damaged records are read
 *   from a copy of their intact complete records; each record left out is counted (`cut`), with a
 *   warning naming the file and the damaged records' lines.
 * - A file that is not a statistics file (its first line is not the header), or with more than
 *   MAX_BAD_RECORDS damaged records or more damaged than intact ones, is moved to `quarantine/` with
 *   one error line: likely not ours, or damaged beyond what skipping a record explains, and the
 *   operator decides. It is never deleted.
 */
import { mkdir, open, rename } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { checkCsvFile, type BadRecord, type CsvCheck } from './csv-check.js'

const MAX_BAD_RECORDS = 100
const QUARANTINE_DIR = 'quarantine'
/** Damaged records named (line and why) in the log line of a file. */
const LOGGED_RECORDS = 20

/** Where the warnings and the quarantine's error line go. */
export interface IntakeLog {
  warn(fields: Record<string, unknown>, msg: string): void
  error(fields: Record<string, unknown>, msg: string): void
}

export interface IntakeFile {
  /** The byte offset after the file's last line break. */
  end: number
  /** What DuckDB reads: the file, or `copyPath` holding its intact complete records. */
  source: string
  /** Records left out: a cut last record, damaged records. */
  cut: number
}

/** Checks `path` (`size` bytes); `undefined` when it was moved to quarantine/. */
export async function intakeCsvFile(
  path: string,
  size: number,
  copyPath: string,
  log: IntakeLog
): Promise<IntakeFile | undefined> {
  const name = basename(path)
  const check = await checkCsvFile(path, size, MAX_BAD_RECORDS)
  const { end, bad } = check
  if ((end > 0 && !check.header) || bad.length > MAX_BAD_RECORDS || bad.length > check.good) {
    await quarantine(path, check, log)
    return undefined
  }
  const cut = end < size ? 1 : 0
  if (cut === 1)
    log.warn(
      { file: name, offset: end, bytes: size - end },
      'statistics file ends in a truncated line (a writer stopped mid-row): that partial row is skipped, every complete row is imported'
    )
  if (bad.length > 0)
    log.warn(
      { file: name, skipped: bad.length, records: lines(bad) },
      'statistics file has damaged records: each is skipped and counted, every other row is imported'
    )
  if (cut === 0 && bad.length === 0) return { end, source: path, cut: 0 }
  await copyWithout(path, copyPath, end, bad)
  return { end, source: copyPath, cut: cut + bad.length }
}

function lines(bad: readonly BadRecord[]): string[] {
  return bad.slice(0, LOGGED_RECORDS).map((b) => `line ${b.line}: ${b.why}`)
}

async function quarantine(path: string, check: CsvCheck, log: IntakeLog): Promise<void> {
  const folder = join(dirname(path), QUARANTINE_DIR)
  const to = join(folder, basename(path))
  await mkdir(folder, { recursive: true })
  await rename(path, to)
  log.error(
    {
      file: basename(path),
      to,
      header: check.header,
      damaged: check.bad.length > MAX_BAD_RECORDS ? `more than ${MAX_BAD_RECORDS}` : check.bad.length,
      intact: check.good,
      records: lines(check.bad)
    },
    check.header
      ? 'statistics file quarantined: too many damaged records; it is kept, not imported'
      : 'statistics file quarantined: its first line is not a statistics header; it is kept, not imported'
  )
}

/** Copies the first `end` bytes of `from` to `to`, leaving out the `bad` byte ranges (in file order). */
async function copyWithout(from: string, to: string, end: number, bad: readonly BadRecord[]): Promise<void> {
  const src = await open(from, 'r')
  try {
    const dst = await open(to, 'w')
    try {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(end, 1)))
      let pos = 0
      const copyTo = async (upTo: number): Promise<void> => {
        while (pos < upTo) {
          const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, upTo - pos), pos)
          if (bytesRead === 0) throw new Error(`${from} is shorter than it was`)
          const { bytesWritten } = await dst.write(buf, 0, bytesRead)
          if (bytesWritten !== bytesRead) throw new Error(`short write to ${to} (disk full?)`)
          pos += bytesRead
        }
      }
      for (const b of bad) {
        await copyTo(b.start)
        pos = b.end
      }
      await copyTo(end)
    } finally {
      await dst.close()
    }
  } finally {
    await src.close()
  }
}
