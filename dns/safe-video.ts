/*
 * Safe video: the client's query for a video host is answered with a CNAME to the restricted
 * host (`verdict.target`) plus that host's addresses, asked from the upstream resolvers with a
 * query of our own (A/AAAA only; other types get the CNAME alone).
 */
import {
  EDE_NO_REACHABLE_AUTHORITY,
  QCLASS_IN,
  QTYPE_A,
  QTYPE_AAAA,
  QueryScratch,
  RCODE_SERVFAIL,
  compileEdeText,
  decodeAddresses,
  ANSWER_BUFFER_SIZE,
  readQuery,
  writeCnameAnswer,
  writeErrorAnswer
} from '../engine/wire/index.js'
import type { Peer } from './peer.js'

export const EDE_TIMEOUT = compileEdeText('upstream resolver did not answer')

// A query for `name`/`qtype`, ID 0 (the forwarder sets a random one), RD set.
function buildQuery(name: string, qtype: number): Buffer {
  const labels = name.split('.').filter((l) => l !== '')
  const parts = [Buffer.from([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])]
  for (const l of labels) parts.push(Buffer.from([l.length]), Buffer.from(l, 'ascii'))
  parts.push(Buffer.from([0, qtype >>> 8, qtype & 0xff, 0, QCLASS_IN]))
  return Buffer.concat(parts)
}

export class SafeVideo {
  private readonly scratch = new QueryScratch()
  private readonly templates = new Map<string, Buffer>()

  /**
   * Starts answering `msg` with a CNAME to `target`. Returns the answer length written into `out`
   * when no upstream question is needed, else the query to forward (for the target's addresses).
   */
  begin(msg: Buffer, target: string, out: Buffer): Buffer | number {
    const q = this.scratch
    readQuery(msg, q)
    if (q.qclass !== QCLASS_IN || (q.qtype !== QTYPE_A && q.qtype !== QTYPE_AAAA)) {
      return writeCnameAnswer(msg, q, target, [], out)
    }
    const cacheKey = `${target}/${q.qtype}`
    let template = this.templates.get(cacheKey)
    if (template === undefined) {
      template = buildQuery(target, q.qtype)
      this.templates.set(cacheKey, template)
    }
    return Buffer.from(template)
  }

  /**
   * Writes the client's answer for a finished safe-video query into `out`: the CNAME and the
   * target's addresses, or SERVFAIL (EDE 22) when the upstream gave none. Returns [length, rcode].
   */
  finish(original: Buffer, target: string, response: Buffer | null, out: Buffer, peer: Peer): [number, number] {
    const decoded = response === null ? undefined : decodeAddresses(response)
    const q = this.scratch
    readQuery(original, q)
    if (decoded === undefined) {
      return [
        writeErrorAnswer(original, q, RCODE_SERVFAIL, out, EDE_NO_REACHABLE_AUTHORITY, EDE_TIMEOUT),
        RCODE_SERVFAIL
      ]
    }
    return [
      writeCnameAnswer(
        original,
        q,
        target,
        decoded.records,
        out,
        peer.channel.isStream ? { maxSize: ANSWER_BUFFER_SIZE } : {}
      ),
      0
    ]
  }
}
