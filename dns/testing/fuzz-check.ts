/**
 * Valid queries checked among fuzz traffic (dns/fuzz.test.ts and its latency probe, probe-child.ts):
 * each gets a unique name, blocked (the block address) or forwarded (the raw upstream's address), and
 * its answer is matched by ID and question, so answers to fuzz packets that share the ID are ignored.
 */
import { randomInt } from 'node:crypto'
import dnsPacket from 'dns-packet'
import { BLOCK_V4 } from '../../engine/testing/dns.js'
import { validQuery } from './fuzz.js'

/** The address the fuzz test's raw upstream answers every A query with. */
export const FWD = '198.51.100.10'

interface Expect {
  name: string
  a: string
  sent: number
  resolve: (problem: string | null) => void
}

/** Checks an answer against what the valid query named `e.name` must get. */
function problemOf(msg: Buffer, id: number, e: Expect): string | null | undefined {
  if (msg.length < 12 || msg.readUInt16BE(0) !== id) return undefined
  let p: dnsPacket.DecodedPacket
  try {
    p = dnsPacket.decode(msg)
  } catch {
    return undefined
  }
  if (p.questions?.[0]?.name !== e.name) return undefined // a fuzz packet's answer that shares the ID
  const a = p.answers?.find((x) => x.type === 'A') as { data?: string } | undefined
  if ((p as { rcode?: string }).rcode !== 'NOERROR' || a?.data !== e.a)
    return `${e.name}: ${(p as { rcode?: string }).rcode ?? '?'} ${a?.data ?? 'no A'} (wanted ${e.a})`
  return null
}

/** Valid queries in flight on one socket, by ID; answers to fuzz packets are ignored. */
export class Checker {
  readonly pending = new Map<number, Expect>()
  readonly latencies: number[] = []
  /** The latencies of the blocked queries only: answered by the server alone, no upstream in the path. */
  readonly localLatencies: number[] = []
  readonly problems: string[] = []
  private serial = 0
  onMessage(msg: Buffer): void {
    if (msg.length < 2) return
    const id = msg.readUInt16BE(0)
    const e = this.pending.get(id)
    if (e === undefined) return
    const problem = problemOf(msg, id, e)
    if (problem === undefined) return
    this.pending.delete(id)
    const ms = performance.now() - e.sent
    this.latencies.push(ms)
    if (e.a === BLOCK_V4) this.localLatencies.push(ms)
    e.resolve(problem)
  }
  /** A fresh valid query (a unique name: blocked or forwarded) and the promise of its verdict. */
  make(tag: string): { msg: Buffer; done: Promise<string | null> } {
    let id = randomInt(0, 0x10000)
    while (this.pending.has(id)) id = (id + 1) & 0xffff
    const n = this.serial++
    const blocked = n % 2 === 0
    const name = `${tag}${n}.${blocked ? 'casino.example' : 'fwd.example'}`
    const msg = validQuery(id, name, 1, n % 3 === 0)
    const done = new Promise<string | null>((resolve) => {
      const e: Expect = { name, a: blocked ? BLOCK_V4 : FWD, sent: 0, resolve }
      const timer = setTimeout(() => {
        this.pending.delete(id)
        resolve(`${name}: no answer within 5 s`)
      }, 5000)
      e.resolve = (p) => {
        clearTimeout(timer)
        resolve(p)
      }
      this.pending.set(id, e)
      queueMicrotask(() => {
        e.sent = performance.now()
      })
    })
    return { msg, done }
  }
}
