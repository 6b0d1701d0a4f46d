/*
 * One query in, one decision out: the per-packet work shared by the inline front loop and the
 * pool worker (engine/pool/worker.ts). `Judge.judge` parses with the allocation-free wire
 * reader, runs the policy on the wire labels' suffix keys and, when we answer ourselves (block,
 * safe search, malformed), writes the answer into the caller's buffer by patching the query.
 * Forwarding and safe video need I/O, so they are returned as a decision for the front to carry out.
 */
import { isIP } from 'node:net'
import type { Config } from '../config/types.js'
import { Verdict, type Policy, type Reason, type SuffixKeys } from '../policy/index.js'
import {
  EDE_BLOCKED,
  EDE_FILTERED,
  QUERY_DROP,
  QUERY_OK,
  QueryScratch,
  capTtls,
  compileBlockAnswer,
  ecsAddressOf,
  keyOf,
  readQuery,
  writeBlockAnswer,
  writeErrorAnswer,
  type BlockAnswerOptions
} from '../wire/index.js'

/** Send nothing. */
export const JUDGE_DROP = 0
/** An answer was written into the output buffer (`answerLength` bytes). */
export const JUDGE_ANSWER = 1
/** Forward the query unchanged (but for its ID) to the upstream resolvers. */
export const JUDGE_FORWARD = 2
/** Safe video: answer a CNAME to `verdict.target` plus the target's addresses from upstream. */
export const JUDGE_SAFEVIDEO = 3
export type JudgeKind = 0 | 1 | 2 | 3

/** The query's labels as the policy's suffix keys, without copying (borrowed from the scratch). */
export class QueryKeys implements SuffixKeys {
  readonly q: QueryScratch
  constructor(q: QueryScratch) {
    this.q = q
  }
  get labelCount(): number {
    return this.q.labelCount
  }
  suffix(fromLabel: number): string {
    return keyOf(this.q, fromLabel)
  }
}

/** Block answers compiled once per reason, so each carries its own EDE (RFC 8914). */
export interface BlockAnswers {
  forReason(reason: Reason): BlockAnswerOptions
}

/** Compiles the block answers from the proxy section: blockpage-ip (one per family), ttl. */
export function compileBlockAnswers(proxy: Readonly<Config['proxy']>): BlockAnswers {
  let ipv4: string | undefined
  let ipv6: string | undefined
  for (const ip of proxy['blockpage-ip']) {
    if (isIP(ip) === 4) ipv4 ??= ip
    else if (isIP(ip) === 6) ipv6 ??= ip
  }
  const make = (edeInfoCode: number, edeExtraText: string): BlockAnswerOptions =>
    compileBlockAnswer({ ipv4, ipv6, ttl: proxy.ttl, edeInfoCode, edeExtraText })
  // 15 Blocked: an operator's list decided. 17 Filtered: the user's own settings (categories,
  // safe search) decided (RFC 8914 §4.16, §4.18).
  const table: Partial<Record<Reason, BlockAnswerOptions>> = {
    'global-blacklist': make(EDE_BLOCKED, 'blocked: global blacklist'),
    'global-allow-only': make(EDE_BLOCKED, 'blocked: not in the global whitelist'),
    'user-blacklist': make(EDE_BLOCKED, 'blocked: user blacklist'),
    'user-allow-only': make(EDE_BLOCKED, 'blocked: not in the user whitelist'),
    category: make(EDE_FILTERED, 'filtered: category'),
    'schedule-blacklist': make(EDE_FILTERED, 'filtered: scheduled blacklist'),
    'schedule-allow-only': make(EDE_FILTERED, 'filtered: scheduled allow-only'),
    'schedule-category': make(EDE_FILTERED, 'filtered: scheduled category'),
    safesearch: make(EDE_FILTERED, 'filtered: safe search')
  }
  const fallback = make(EDE_BLOCKED, 'blocked')
  return { forReason: (reason) => table[reason] ?? fallback }
}

export interface JudgeOptions {
  policy: Policy
  answers: BlockAnswers
  /** Take the client address from EDNS Client Subnet when present. */
  clientSubnet: boolean
  /** Fill the name's categories even when a list decided (statistics on). */
  wantCats: boolean
}

/** Stable-shape, one per front loop or worker: every field is valid until the next `judge`. */
export class Judge {
  readonly scratch = new QueryScratch()
  readonly verdict = new Verdict()
  readonly keys: QueryKeys
  /** The address the policy was chosen by. */
  clientAddress = ''
  answerLength = 0
  /** RCODE of the answer written (JUDGE_ANSWER), else 0. */
  rcode = 0
  /** The query was refused before policy (FORMERR, NOTIMP, BADVERS). */
  isRejected = false
  wantCats: boolean
  private readonly policy: Policy
  private readonly answers: BlockAnswers
  private readonly clientSubnet: boolean

  constructor(options: JudgeOptions) {
    this.keys = new QueryKeys(this.scratch)
    this.policy = options.policy
    this.answers = options.answers
    this.clientSubnet = options.clientSubnet
    this.wantCats = options.wantCats
  }

  /** Decides `msg` from `source`; `out` needs ANSWER_BUFFER_SIZE bytes. */
  judge(msg: Buffer, source: string, out: Buffer): JudgeKind {
    const q = this.scratch
    this.answerLength = 0
    this.rcode = 0
    this.isRejected = false
    this.clientAddress = source
    const v = readQuery(msg, q)
    if (v === QUERY_DROP) return JUDGE_DROP
    if (v !== QUERY_OK) {
      this.isRejected = true
      this.rcode = v
      this.answerLength = writeErrorAnswer(msg, q, v, out)
      return JUDGE_ANSWER
    }
    if (this.clientSubnet && q.hasClientSubnet) this.clientAddress = ecsAddressOf(q)
    const verdict = this.policy.evaluate(this.clientAddress, this.keys, this.verdict, this.wantCats)
    switch (verdict.action) {
      case 'forward':
        return JUDGE_FORWARD
      case 'safevideo':
        return JUDGE_SAFEVIDEO
      case 'block':
      case 'safesearch':
        this.answerLength = writeBlockAnswer(msg, q, out, this.answers.forReason(verdict.reason))
        // A scheduled rule's boundary ends the answer's life in caches (issue 27).
        if (verdict.ttlCap >= 0) capTtls(out, this.answerLength, verdict.ttlCap)
        return JUDGE_ANSWER
    }
  }
}
