/*
 * Names the DNS server answers itself, before any policy, and never forwards (docs/dns.md, "DDR" and
 * "The canary"):
 *   - the browsers' canary `use-application-dns.net`: NXDOMAIN, which tells Firefox to keep using the
 *     network's resolver instead of switching to its own DNS over HTTPS (`proxy.doh-canary`);
 *   - DDR (RFC 9462): `_dns.resolver.arpa` SVCB (64) and HTTPS (65) queries get this server's encrypted
 *     endpoints (RFC 9460, 9461: alpn, port, dohpath, target the server name), NODATA when it has none.
 *     Every other name under `resolver.arpa`, a zone no authoritative server serves, gets NXDOMAIN
 *     (`resolver.arpa` itself and other types of `_dns.resolver.arpa`: NODATA).
 * The records are compiled once; an answer is the query's header and question, the records, and the
 * query's OPT (with the EDNS the error answers carry).
 */
import {
  ANSWER_BUFFER_SIZE,
  QTYPE_HTTPS,
  QTYPE_SVCB,
  RCODE_NOERROR,
  RCODE_NXDOMAIN,
  writeErrorAnswer,
  type QueryScratch
} from '../wire/index.js'

/** This server's encrypted endpoints, as DDR names them. */
export interface DdrEndpoints {
  /** The name on the certificate (`proxy.server-name`): every record's TargetName. */
  readonly serverName: string
  /** DNS over TLS listeners (ALPN `dot`). */
  readonly dot: ReadonlyArray<{ readonly port: number }>
  /** DNS over HTTPS listeners (ALPN `h2`), with the path of their URI template (`/dns-query`). */
  readonly doh: ReadonlyArray<{ readonly port: number; readonly path: string }>
}

export interface LocalAnswerOptions {
  /** Answer the canary (`proxy.doh-canary`). */
  readonly canary: boolean
  /** The endpoints DDR names, or null: no encrypted listener (DDR answers NODATA). */
  readonly ddr: DdrEndpoints | null
  /** TTL of the DDR records (seconds). */
  readonly ttl?: number
}

/** Why a query got a local answer (the query log's reason). */
export type LocalReason = 'canary' | 'ddr'

const CANARY = Buffer.from('use-application-dns.net', 'latin1')
const RESOLVER_ARPA = Buffer.from('resolver.arpa', 'latin1')
const DDR_NAME = Buffer.from('_dns.resolver.arpa', 'latin1')
const DDR_TTL = 300
const CLASS_IN = 1
/** SvcParamKeys (RFC 9460 §14.3.2, RFC 9461 §5). */
const KEY_ALPN = 1
const KEY_PORT = 3
const KEY_DOHPATH = 7
/** Room kept for the header, a question of the longest DDR name and an OPT with an EDE. */
const MAX_RECORDS_BYTES = 512 - 12 - (DDR_NAME.length + 2 + 4) - 64

function u16(n: number): Buffer {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(n)
  return b
}

function wireName(name: string): Buffer {
  const parts: Buffer[] = []
  for (const label of name.replace(/\.$/, '').split('.')) {
    const b = Buffer.from(label, 'latin1')
    if (b.length === 0 || b.length > 63) throw new Error(`DDR: ${JSON.stringify(name)} is not a host name`)
    parts.push(Buffer.from([b.length]), b)
  }
  parts.push(Buffer.from([0]))
  return Buffer.concat(parts)
}

function param(key: number, value: Buffer): Buffer {
  return Buffer.concat([u16(key), u16(value.length), value])
}

/** The RDATA of one SVCB/HTTPS record (ServiceMode): priority, target, then its params in key order. */
function svcbRdata(priority: number, target: Buffer, alpn: string, port: number, dohPath: string | null): Buffer {
  const params = [
    param(KEY_ALPN, Buffer.concat([Buffer.from([alpn.length]), Buffer.from(alpn, 'latin1')])),
    param(KEY_PORT, u16(port))
  ]
  if (dohPath !== null) params.push(param(KEY_DOHPATH, Buffer.from(dohPath + '{?dns}', 'utf8')))
  return Buffer.concat([u16(priority), target, ...params])
}

/** The answer records for `qtype` (their owner a pointer to the question's name), back to back. */
function compileRecords(ddr: DdrEndpoints, qtype: number, ttl: number): Buffer {
  const target = wireName(ddr.serverName)
  const rdatas: Buffer[] = []
  for (const e of ddr.dot) rdatas.push(svcbRdata(rdatas.length + 1, target, 'dot', e.port, null))
  for (const e of ddr.doh) rdatas.push(svcbRdata(rdatas.length + 1, target, 'h2', e.port, e.path))
  const head = Buffer.alloc(10)
  head.writeUInt16BE(qtype, 0)
  head.writeUInt16BE(CLASS_IN, 2)
  head.writeUInt32BE(ttl, 4)
  const rrs = rdatas.map((r) => {
    head.writeUInt16BE(r.length, 8)
    return Buffer.concat([Buffer.from([0xc0, 0x0c]), head, r])
  })
  const all = Buffer.concat(rrs)
  if (all.length > MAX_RECORDS_BYTES)
    throw new Error(`DDR: ${rdatas.length} endpoints make ${all.length} bytes of records, more than a UDP answer holds`)
  return all
}

function nameIs(q: QueryScratch, from: number, name: Buffer): boolean {
  return q.nameLength - from === name.length && q.nameBytes.compare(name, 0, name.length, from, q.nameLength) === 0
}

export class LocalAnswers {
  /** Why the last answer written was local (valid after `answer` returned more than 0). */
  reason: LocalReason = 'ddr'
  private readonly canary: boolean
  /** Records per qtype (SVCB, HTTPS), with their count; null without endpoints. */
  private readonly svcb: Buffer | null
  private readonly https: Buffer | null
  private readonly count: number

  constructor(o: LocalAnswerOptions) {
    this.canary = o.canary
    const ddr = o.ddr !== null && o.ddr.dot.length + o.ddr.doh.length > 0 ? o.ddr : null
    this.count = ddr === null ? 0 : ddr.dot.length + ddr.doh.length
    this.svcb = ddr === null ? null : compileRecords(ddr, QTYPE_SVCB, o.ttl ?? DDR_TTL)
    this.https = ddr === null ? null : compileRecords(ddr, QTYPE_HTTPS, o.ttl ?? DDR_TTL)
  }

  /**
   * When `q` (read from `msg`) asks a local name, writes its answer into `out` (ANSWER_BUFFER_SIZE bytes)
   * and returns its length; 0 otherwise (the query goes on to the policy). Costs a label count test for
   * most queries.
   */
  answer(msg: Buffer, q: QueryScratch, out: Buffer): number {
    const n = q.labelCount
    if (n === 2 && this.canary && nameIs(q, 0, CANARY)) {
      this.reason = 'canary'
      return writeErrorAnswer(msg, q, RCODE_NXDOMAIN, out)
    }
    if (n < 2 || !nameIs(q, q.labelStarts[n - 2]!, RESOLVER_ARPA)) return 0 // n - 2 < labelCount
    this.reason = 'ddr'
    if (n === 3 && nameIs(q, 0, DDR_NAME)) return this.ddrAnswer(msg, q, out)
    return writeErrorAnswer(msg, q, n === 2 ? RCODE_NOERROR : RCODE_NXDOMAIN, out)
  }

  private ddrAnswer(msg: Buffer, q: QueryScratch, out: Buffer): number {
    const records = q.qtype === QTYPE_SVCB ? this.svcb : q.qtype === QTYPE_HTTPS ? this.https : null
    const len = writeErrorAnswer(msg, q, RCODE_NOERROR, out)
    if (records === null || len < q.questionEnd || len + records.length > ANSWER_BUFFER_SIZE) return len
    // The error answer is header, question, then the OPT when the query had one: the records go in between.
    const at = q.questionEnd
    out.copyWithin(at + records.length, at, len)
    records.copy(out, at)
    out.writeUInt16BE(this.count, 6) // ANCOUNT
    return len + records.length
  }
}
