/**
 * A zone transfer from a primary (RPZ in): one IXFR or AXFR over TCP, TSIG-checked message by
 * message, read to its closing SOA. It resolves only with a complete, verified transfer; a cut
 * connection, a bad signature, a malformed message or a timeout rejects, and the caller keeps the
 * feed it has (nothing is applied from a partial transfer).
 */
import { EngineError } from '../errors.js'
import { connect } from 'node:net'
import { randomInt } from 'node:crypto'
import { FrameReader, frame } from '../wire/index.js'
import {
  buildQuery,
  CLASS_IN,
  parseMessage,
  TYPE_AXFR,
  TYPE_IXFR,
  TYPE_SOA,
  type Message,
  type ParsedRecord,
  rdataToText,
  readSoa,
  TsigSigner,
  TsigVerifier,
  type TsigKey,
  soaRdata
} from '../rpz-zones/index.js'
import type { TextRecord } from '../rpz-zones/index.js'
import type { FeedStep } from './feed.js'

export interface TransferRequest {
  host: string
  port: number
  zone: string
  /** Our serial: asks IXFR from it; undefined asks AXFR. */
  serial?: number
  key?: TsigKey
  /** Idle time before the transfer is abandoned (default 30 s). */
  timeoutMs?: number
  /**
   * Each record of an AXFR (or an AXFR-style answer to an IXFR) as it arrives, the first SOA first and
   * the closing SOA left out; the result's `records` is then empty. Without it they are collected
   * into `records`. A throw abandons the transfer.
   */
  onRecord?: (r: TextRecord) => void
  /**
   * Records (besides the SOAs) a whole zone (an AXFR, or an AXFR-style answer to an IXFR) may have,
   * and bytes any transfer may carry; past either it is abandoned. An IXFR's records are not counted
   * against `maxRecords`: its deletions and additions are not the zone, whose size the caller checks
   * once the steps are known (FeedZone.applySteps); `maxBytes` bounds what it holds meanwhile.
   */
  maxRecords?: number
  maxBytes?: number
}

export type TransferResult =
  | { kind: 'axfr'; records: TextRecord[] }
  | { kind: 'ixfr'; serial: number; steps: FeedStep[] }
  | { kind: 'current'; serial: number }

export class TransferError extends EngineError {
  constructor(message: string, options?: ErrorOptions) {
    super('ENGINE_RPZ_TRANSFER', message, options)
    this.name = 'TransferError'
  }
}

function textOf(m: Message, r: ParsedRecord): TextRecord {
  if (r.type === TYPE_SOA) {
    const s = readSoa(m.raw, r)
    return {
      name: r.name,
      type: r.type,
      ttl: r.ttl,
      data: `${s.mname} ${s.rname} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`
    }
  }
  return { name: r.name, type: r.type, ttl: r.ttl, data: rdataToText(m.raw, r) }
}

function serialOf(r: TextRecord): number {
  return Number(r.data.split(' ')[2])
}

/** The IXFR steps between the first and last SOA of `records`, or undefined while the stream is not complete. */
function interpretIxfr(records: readonly TextRecord[]): TransferResult | undefined {
  const serial = serialOf(records[0]!)
  const last = records[records.length - 1]!
  if (last.type !== TYPE_SOA || serialOf(last) !== serial || records.length < 4) return undefined
  // Between the first and last SOA: (old SOA, deletions, new SOA, additions) steps.
  const steps: FeedStep[] = []
  let i = 1
  const body = records.length - 1
  while (i < body) {
    const from = records[i++]!
    const deleted: TextRecord[] = []
    while (i < body && records[i]!.type !== TYPE_SOA) deleted.push(records[i++]!)
    if (i >= body) return undefined
    const to = records[i++]!
    const added: TextRecord[] = []
    while (i < body && records[i]!.type !== TYPE_SOA) added.push(records[i++]!)
    steps.push({ from: serialOf(from), to: serialOf(to), deleted, added })
  }
  if (steps[steps.length - 1]?.to !== serial) return undefined
  return { kind: 'ixfr', serial, steps }
}

/**
 * Reads a transfer's answer records as they arrive, message by message. An AXFR (or an AXFR-style
 * answer to an IXFR) is handed to `onRecord` record by record and not kept; an IXFR's records are
 * kept until its closing SOA, then read into steps. `end` says whether the stream is complete.
 */
class TransferReader {
  private first: TextRecord | undefined
  /** 'axfr' or 'ixfr' once the second record has told; undefined before. */
  private mode: 'axfr' | 'ixfr' | undefined
  private readonly ixfr: TextRecord[] = []
  private last: TextRecord | undefined
  count = 0
  /** Records handed to `onRecord` (a whole zone's, the SOA not counted). */
  zoneRecords = 0
  private readonly asked: number | undefined
  private readonly onRecord: (r: TextRecord) => void

  constructor(asked: number | undefined, onRecord: (r: TextRecord) => void) {
    this.asked = asked
    this.onRecord = onRecord
  }

  record(r: TextRecord): void {
    this.count++
    this.last = r
    if (this.first === undefined) {
      if (r.type !== TYPE_SOA) throw new TransferError('the transfer does not start with the SOA')
      this.first = r
      return
    }
    if (this.mode === undefined) {
      // An IXFR answer's second record is the SOA of the serial it starts from (RFC 1995 4); an SOA of
      // the same serial is the end of an AXFR-style answer of an empty zone.
      const incremental = this.asked !== undefined && r.type === TYPE_SOA && serialOf(r) !== serialOf(this.first)
      this.mode = incremental ? 'ixfr' : 'axfr'
      if (incremental) this.ixfr.push(this.first)
      else this.onRecord(this.first)
    }
    if (this.mode === 'ixfr') this.ixfr.push(r)
    else if (r.type !== TYPE_SOA) {
      this.zoneRecords++
      this.onRecord(r)
    }
  }

  /** At the end of a message: the result when the transfer is complete, else undefined. */
  end(singleSoaMessage: boolean): TransferResult | undefined {
    const first = this.first
    if (first === undefined) return undefined
    const serial = serialOf(first)
    // An IXFR answered by one message holding the SOA alone: we are current (or the primary is behind).
    if (this.count === 1)
      return this.asked !== undefined && (singleSoaMessage || serial === this.asked)
        ? { kind: 'current', serial }
        : undefined
    if (this.mode === 'ixfr') return interpretIxfr(this.ixfr)
    const last = this.last!
    return last.type === TYPE_SOA && serialOf(last) === serial ? { kind: 'axfr', records: [] } : undefined
  }
}

/** One transfer of `req.zone` from `req.host:req.port`. */
export async function transferZone(req: TransferRequest): Promise<TransferResult> {
  const zone = req.zone.toLowerCase().replace(/\.$/, '')
  const id = randomInt(0, 0x10000)
  const ixfr = req.serial !== undefined
  const authority = ixfr
    ? [
        {
          name: zone,
          type: TYPE_SOA,
          class: CLASS_IN,
          ttl: 0,
          rdata: soaRdata({ mname: '', rname: '', serial: req.serial!, refresh: 0, retry: 0, expire: 0, minimum: 0 })
        }
      ]
    : []
  let query = buildQuery(id, { name: zone, type: ixfr ? TYPE_IXFR : TYPE_AXFR, class: CLASS_IN }, { authority })
  let verifier: TsigVerifier | undefined
  if (req.key !== undefined) {
    const signer = new TsigSigner(req.key)
    query = signer.next(query)
    verifier = new TsigVerifier(new Map([[req.key.name, req.key]]), signer.mac)
  }
  return await new Promise<TransferResult>((resolve, reject) => {
    const socket = connect(req.port, req.host)
    const reader = new FrameReader()
    const collected: TextRecord[] = []
    const onRecord = req.onRecord ?? ((r: TextRecord) => void collected.push(r))
    const stream = new TransferReader(req.serial, onRecord)
    let done = false
    let bytes = 0
    const maxBytes = req.maxBytes ?? Infinity
    const maxRecords = req.maxRecords ?? Infinity
    const fail = (why: string): void => {
      if (done) return
      done = true
      socket.destroy()
      reject(new TransferError(`transfer of ${zone} from ${req.host}:${req.port}: ${why}`))
    }
    socket.setTimeout(req.timeoutMs ?? 30_000, () => fail('timed out'))
    socket.on('connect', () => socket.write(frame(query)))
    socket.on('error', (err) => fail(err.message))
    socket.on('close', () => fail('connection closed before the transfer was complete'))
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > maxBytes) return fail(`larger than ${maxBytes} bytes (rpz-feeds.max-bytes)`)
      reader.push(chunk)
      try {
        for (let raw = reader.read(); raw !== null && !done; raw = reader.read()) {
          const m = parseMessage(Buffer.from(raw))
          if (m.header.id !== id || !m.header.qr) throw new TransferError('an answer to another query')
          if (verifier !== undefined) {
            const check = verifier.check(m, Date.now(), true)
            if (!check.ok) throw new TransferError(`TSIG: ${check.why}`)
          }
          if (m.header.rcode !== 0) throw new TransferError(`the primary answered rcode ${m.header.rcode}`)
          for (const r of m.answer) {
            stream.record(textOf(m, r))
            if (stream.zoneRecords > maxRecords)
              throw new TransferError(`more than ${maxRecords} records (rpz-feeds.max-records)`)
          }
          const result = stream.end(req.serial !== undefined && m.answer.length === 1)
          if (result?.kind === 'axfr') result.records = collected
          if (result !== undefined) {
            done = true
            socket.destroy()
            resolve(result)
          }
        }
      } catch (err) {
        fail((err as Error).message)
      }
    })
  })
}
