/**
 * The answers of a zone transfer, as a sequence of messages (RFC 5936 2.2: the zone's SOA first and
 * last, every other record in between, packed into messages up to `limit` bytes; RFC 1995 4: an
 * incremental transfer is the new SOA, then for each step the old SOA, the deletions, the new SOA
 * and the additions, then the new SOA again).
 */
import { MessageWriter, TYPE_IXFR, type Question, type WireRecord } from './message.js'
import type { RpzZone, ZoneDiff } from './zone.js'

export const TRANSFER_MESSAGE_LIMIT = 16384

/** Packs `records` into answers to `id`/`question`, none over `limit` bytes (the caller signs each). */
export function* packRecords(
  id: number,
  question: Question,
  records: Iterable<WireRecord>,
  limit = TRANSFER_MESSAGE_LIMIT
): Generator<Buffer> {
  let w = newWriter(id, question, limit)
  for (const r of records) {
    if (w.add(r)) continue
    yield w.finish()
    w = newWriter(id, question, limit)
    if (!w.add(r)) throw new Error(`record ${r.name} larger than a transfer message`)
  }
  yield w.finish()
}

function newWriter(id: number, question: Question, limit: number): MessageWriter {
  const w = new MessageWriter({ id, qr: true, opcode: 0, aa: true, rcode: 0 }, limit)
  w.question(question)
  return w
}

/** Every record of an AXFR of `zone`, in order. */
export function* axfrRecords(zone: RpzZone): Generator<WireRecord> {
  const soa = zone.soaRecord()
  yield soa
  yield* zone.apexRecords()
  for (const [owner, action] of zone.entries) yield* zone.records(owner, action)
  yield soa
}

/** Every record of an IXFR from `fromSerial` with the condensed `diff` (RFC 1995 4). */
export function* ixfrRecords(zone: RpzZone, fromSerial: number, diff: ZoneDiff): Generator<WireRecord> {
  const soa = zone.soaRecord()
  yield soa
  yield zone.soaRecord(fromSerial)
  for (const [owner, [before]] of diff) if (before !== undefined) yield* zone.records(owner, before)
  yield soa
  for (const [owner, [, after]] of diff) if (after !== undefined) yield* zone.records(owner, after)
  yield soa
}

/**
 * The record stream that answers an AXFR or IXFR of `zone`: for IXFR, the SOA alone when the
 * client is current, the difference when the journal reaches back to its serial, else a full zone
 * (RFC 1995 4: an AXFR-style answer to an IXFR query).
 */
export function transferRecords(
  zone: RpzZone,
  qtype: number,
  clientSerial: number | undefined
): { kind: 'axfr' | 'ixfr' | 'current'; records: Iterable<WireRecord> } {
  if (qtype === TYPE_IXFR && clientSerial !== undefined) {
    if (clientSerial === zone.serial) return { kind: 'current', records: [zone.soaRecord()] }
    const diff = zone.changesSince(clientSerial)
    if (diff !== undefined) return { kind: 'ixfr', records: ixfrRecords(zone, clientSerial, diff) }
  }
  return { kind: 'axfr', records: axfrRecords(zone) }
}
