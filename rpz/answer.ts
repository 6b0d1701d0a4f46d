/**
 * One request to the rpz role's DNS listener in, its answer messages out: SOA queries (a
 * secondary's refresh probe), AXFR and IXFR (over TCP; over UDP an IXFR gets the SOA alone, which
 * tells the secondary to come back over TCP, RFC 1995 2), each checked against the transfer access
 * rules and, when keys are configured, TSIG. The answers of a transfer are a lazy sequence, so a
 * million-name zone is packed message by message as the socket drains.
 */
import type { AccessList } from '../engine/net/index.js'
import {
  buildEmptyReply,
  MessageWriter,
  OPCODE_QUERY,
  parseMessage,
  RCODE_FORMERR,
  RCODE_NOTAUTH,
  RCODE_NOTIMP,
  RCODE_REFUSED,
  TYPE_AXFR,
  TYPE_IXFR,
  TYPE_SOA,
  type Message,
  readSoa,
  TsigSigner,
  TsigVerifier,
  type TsigKey,
  packRecords,
  transferRecords
} from '../engine/rpz-zones/index.js'
import type { RpzZone } from '../engine/rpz-zones/index.js'

export interface AnswerContext {
  zone(name: string): RpzZone | undefined
  access: AccessList
  keys: ReadonlyMap<string, TsigKey>
  /** Counts what was served and refused (metrics). */
  count(what: 'axfr' | 'ixfr' | 'current' | 'soa' | 'refused' | 'tsig-failed' | 'formerr'): void
}

export interface Request {
  raw: Buffer
  peer: string
  tcp: boolean
}

function reply(m: Message, rcode: number): Buffer[] {
  return [buildEmptyReply({ id: m.header.id, opcode: m.header.opcode, question: m.question }, rcode)]
}

function parseOrFormerr(raw: Buffer): Message | Buffer | undefined {
  try {
    return parseMessage(raw)
  } catch {
    if (raw.length < 12 || (raw[2]! & 0x80) !== 0) return undefined
    const w = new MessageWriter(
      { id: raw.readUInt16BE(0), qr: true, opcode: (raw[2]! >> 3) & 0xf, aa: false, rcode: RCODE_FORMERR },
      12
    )
    return w.finish()
  }
}

/** The answers to one request (none: drop it, e.g. a response or garbage without a header). */
export function* answer(req: Request, ctx: AnswerContext): Generator<Buffer> {
  const parsed = parseOrFormerr(req.raw)
  if (parsed === undefined) return
  if (Buffer.isBuffer(parsed)) {
    ctx.count('formerr')
    yield parsed
    return
  }
  const m = parsed
  if (m.header.qr) return
  const q = m.question[0]
  if (m.header.opcode !== OPCODE_QUERY || m.question.length !== 1 || q === undefined) {
    yield* reply(m, m.header.opcode !== OPCODE_QUERY ? RCODE_NOTIMP : RCODE_FORMERR)
    return
  }
  const zone = ctx.zone(q.name)
  if (zone === undefined) {
    ctx.count('refused')
    yield* reply(m, RCODE_NOTAUTH)
    return
  }
  if (!ctx.access.allows(req.peer)) {
    ctx.count('refused')
    yield* reply(m, RCODE_REFUSED)
    return
  }
  const signed = verifyRequest(m, ctx, q.type === TYPE_SOA)
  if (signed === 'refuse') {
    ctx.count('tsig-failed')
    yield* reply(m, RCODE_NOTAUTH)
    return
  }
  const sign = (msgs: Iterable<Buffer>): Iterable<Buffer> => {
    if (signed === undefined) return msgs
    const signer = new TsigSigner(signed.key, signed.mac)
    return (function* () {
      for (const msg of msgs) yield signer.next(msg)
    })()
  }
  if (q.type === TYPE_SOA || (q.type === TYPE_IXFR && !req.tcp)) {
    ctx.count('soa')
    yield* sign(packRecords(m.header.id, q, [zone.soaRecord()], 512))
    return
  }
  if ((q.type !== TYPE_AXFR && q.type !== TYPE_IXFR) || !req.tcp) {
    yield* reply(m, q.type === TYPE_AXFR ? RCODE_FORMERR : RCODE_REFUSED)
    return
  }
  const client = q.type === TYPE_IXFR ? clientSerial(m) : undefined
  const { kind, records } = transferRecords(zone, q.type, client)
  ctx.count(kind)
  yield* sign(packRecords(m.header.id, q, records))
}

/** The serial in an IXFR query's authority section (RFC 1995 3). */
function clientSerial(m: Message): number | undefined {
  const soa = m.authority.find((r) => r.type === TYPE_SOA)
  if (soa === undefined) return undefined
  try {
    return readSoa(m.raw, soa).serial
  } catch {
    return undefined
  }
}

/**
 * The request's TSIG: undefined when unsigned and allowed (no keys configured, or an SOA query),
 * 'refuse' for a bad signature or an unsigned transfer while keys are configured.
 */
function verifyRequest(
  m: Message,
  ctx: AnswerContext,
  soaQuery: boolean
): { key: TsigKey; mac: Buffer } | undefined | 'refuse' {
  const last = m.additional[m.additional.length - 1]
  if (last?.type !== 250) return ctx.keys.size === 0 || soaQuery ? undefined : 'refuse'
  const check = new TsigVerifier(ctx.keys).check(m)
  return check.ok ? { key: check.key, mac: check.mac } : 'refuse'
}
