/*
 * One query in, one decision out: the per-packet work shared by the inline front loop and the
 * pool worker (engine/pool/worker.ts). `Judge.judge` parses with the allocation-free wire
 * reader, runs the policy on the wire labels' suffix keys and, when we answer ourselves (block,
 * safe search, malformed), writes the answer into the caller's buffer by patching the query.
 * Forwarding and safe video need I/O, so they are returned as a decision for the front to carry out.
 */
import { isIP } from 'node:net'
import type { Config } from '../config/index.js'
import { Verdict, type Policy, type Reason, type Snapshot, type SuffixKeys } from '../policy/index.js'
import type { FeedAction, RpzHit } from '../rpz-feeds/index.js'
import {
  EDE_BLOCKED,
  EDE_FILTERED,
  EDE_PROHIBITED,
  RCODE_NXDOMAIN,
  RCODE_REFUSED,
  compileEdeText,
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
import type { LocalAnswers, LocalReason } from './local-answers.js'

/** Send nothing. */
export const JUDGE_DROP = 0
/** An answer was written into the output buffer (`answerLength` bytes). */
export const JUDGE_ANSWER = 1
/** Forward the query unchanged (but for its ID) to the upstream resolvers. */
export const JUDGE_FORWARD = 2
/** Safe video: answer a CNAME to `verdict.target` plus the target's addresses from upstream. */
export const JUDGE_SAFEVIDEO = 3
/**
 * An answer was written that no policy decided (`answerLength` bytes, `localReason` says why): the canary,
 * DDR, or REFUSED for an unknown client ID. Counted apart from blocks.
 */
export const JUDGE_LOCAL = 4
export type JudgeKind = 0 | 1 | 2 | 3 | 4

/** The EDE text of the REFUSED answer to an unknown client ID. */
const UNKNOWN_CLIENT_ID_TEXT = compileEdeText('unknown client ID')

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
  /** TTL of block answers (an RPZ feed's local data is answered with it too). */
  readonly ttl: number
}

/** The EDE text of the answers an RPZ feed rewrote. */
const RPZ_TEXT = compileEdeText('blocked: rpz feed')
const TC_BIT = 0x02
const TYPE_CNAME = 5

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
    safesearch: make(EDE_FILTERED, 'filtered: safe search'),
    rpz: make(EDE_BLOCKED, 'blocked: rpz feed')
  }
  const fallback = make(EDE_BLOCKED, 'blocked')
  return { forReason: (reason) => table[reason] ?? fallback, ttl: proxy.ttl }
}

export interface JudgeOptions {
  policy: Policy
  answers: BlockAnswers
  /** Take the client address from EDNS Client Subnet when present. */
  clientSubnet: boolean
  /** Fill the name's categories even when a list decided (statistics on). */
  wantCats: boolean
  /** Names answered before policy (canary, DDR); null: none. */
  local?: LocalAnswers | null
  /** A client ID no user holds: REFUSED with EDE 18 (`refuse`, the default) or the server defaults. */
  unknownClientId?: 'refuse' | 'anonymous'
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
  /** The client ID the query came with (lower case), else null. */
  clientId: string | null = null
  /** Why a JUDGE_LOCAL answer was written ('' otherwise). */
  localReason: LocalReason | 'unknown-client-id' | '' = ''
  wantCats: boolean
  private readonly policy: Policy
  private readonly answers: BlockAnswers
  private readonly clientSubnet: boolean
  private readonly local: LocalAnswers | null
  private readonly refuseUnknownId: boolean
  /** An RPZ feed's local A/AAAA data as block answers, compiled on first use (a feed's reload makes new actions). */
  private readonly localData = new WeakMap<FeedAction, BlockAnswerOptions>()

  constructor(options: JudgeOptions) {
    this.keys = new QueryKeys(this.scratch)
    this.policy = options.policy
    this.answers = options.answers
    this.clientSubnet = options.clientSubnet
    this.wantCats = options.wantCats
    this.local = options.local ?? null
    this.refuseUnknownId = options.unknownClientId !== 'anonymous'
  }

  /**
   * Decides `msg` from `source` (the peer's address: the source, or a trusted proxy's forwarded address),
   * or from `clientId` when the transport gave one (DoH path, DoT server name), which then decides the user
   * whatever the address; `out` needs ANSWER_BUFFER_SIZE bytes. `overStream`: the query came over TCP
   * (or TLS, HTTPS), where an RPZ feed's `rpz-tcp-only.` answers normally.
   */
  judge(msg: Buffer, source: string, out: Buffer, clientId: string | null = null, overStream = false): JudgeKind {
    const q = this.scratch
    this.answerLength = 0
    this.rcode = 0
    this.isRejected = false
    this.clientAddress = source
    this.clientId = clientId === null ? null : clientId.toLowerCase()
    this.localReason = ''
    const v = readQuery(msg, q)
    if (v === QUERY_DROP) return JUDGE_DROP
    if (v !== QUERY_OK) {
      this.isRejected = true
      this.rcode = v
      this.answerLength = writeErrorAnswer(msg, q, v, out)
      return JUDGE_ANSWER
    }
    if (this.local !== null) {
      const len = this.local.answer(msg, q, out)
      if (len > 0) return this.localAnswer(this.local.reason, len, out)
    }
    let snap: Snapshot
    if (this.clientId !== null) {
      const known = this.policy.snapshotForClientId(this.clientId)
      if (known === undefined && this.refuseUnknownId) {
        const len = writeErrorAnswer(msg, q, RCODE_REFUSED, out, EDE_PROHIBITED, UNKNOWN_CLIENT_ID_TEXT)
        return this.localAnswer('unknown-client-id', len, out)
      }
      snap = known ?? this.policy.anonymousSnapshot()
    } else {
      if (this.clientSubnet && q.hasClientSubnet) this.clientAddress = ecsAddressOf(q)
      snap = this.policy.snapshotFor(this.clientAddress)
    }
    const verdict = this.policy.evaluateSnapshot(snap, this.keys, this.verdict, this.wantCats, this.clientAddress)
    if (verdict.reason === 'rpz') return this.rpzAnswer(msg, out, verdict.rpz!, overStream) // reason rpz sets rpz
    switch (verdict.action) {
      case 'forward':
        return JUDGE_FORWARD
      case 'safevideo':
        return JUDGE_SAFEVIDEO
      case 'block':
      case 'safesearch':
        this.answerLength = writeBlockAnswer(msg, q, out, this.answers.forReason(verdict.reason))
        // A scheduled rule's boundary ends the answer's life in caches.
        if (verdict.ttlCap >= 0) capTtls(out, this.answerLength, verdict.ttlCap)
        return JUDGE_ANSWER
    }
  }

  /** The answer an RPZ feed's action asks for (draft-ietf-dnsop-dns-rpz 3). */
  private rpzAnswer(msg: Buffer, out: Buffer, hit: RpzHit, overStream: boolean): JudgeKind {
    const q = this.scratch
    const a = hit.action
    switch (a.kind) {
      case 'drop':
        return JUDGE_DROP
      case 'tcp-only':
        // Over TCP the query is answered as if no feed matched; over UDP, an empty answer with TC.
        if (overStream) {
          this.verdict.action = 'forward'
          return JUDGE_FORWARD
        }
        this.answerLength = writeErrorAnswer(msg, q, 0, out)
        out[2] = out[2]! | TC_BIT
        return JUDGE_ANSWER
      case 'nxdomain':
        this.rcode = RCODE_NXDOMAIN
        this.answerLength = writeErrorAnswer(msg, q, RCODE_NXDOMAIN, out, EDE_BLOCKED, RPZ_TEXT)
        return JUDGE_ANSWER
      case 'nodata':
        this.answerLength = writeErrorAnswer(msg, q, 0, out, EDE_BLOCKED, RPZ_TEXT)
        return JUDGE_ANSWER
      case 'block':
        this.answerLength = writeBlockAnswer(msg, q, out, this.answers.forReason('rpz'))
        return JUDGE_ANSWER
      case 'local':
        return this.localDataAnswer(msg, out, a)
      default:
        // passthru never reaches here (the policy went on to the user's steps).
        return JUDGE_FORWARD
    }
  }

  /**
   * Local data: a CNAME is answered as safe video is (the CNAME, and the target's addresses asked
   * upstream; `*.target` puts the query name in front), A/AAAA records as a block answer with them.
   */
  private localDataAnswer(msg: Buffer, out: Buffer, a: Extract<FeedAction, { kind: 'local' }>): JudgeKind {
    const cname = a.records.find((r) => r[0] === TYPE_CNAME)
    if (cname !== undefined) {
      const target = cname[1]
      this.verdict.target = target.startsWith('*.') ? `${this.keys.suffix(0)}${target.slice(1)}` : target
      return JUDGE_SAFEVIDEO
    }
    let answer = this.localData.get(a)
    if (answer === undefined) {
      const ipv4 = a.records.find((r) => r[0] === 1)?.[1]
      const ipv6 = a.records.find((r) => r[0] === 28)?.[1]
      answer = compileBlockAnswer({
        ipv4,
        ipv6,
        ttl: this.answers.ttl,
        edeInfoCode: EDE_BLOCKED,
        edeExtraText: 'blocked: rpz feed'
      })
      this.localData.set(a, answer)
    }
    this.answerLength = writeBlockAnswer(msg, this.scratch, out, answer)
    return JUDGE_ANSWER
  }

  private localAnswer(reason: LocalReason | 'unknown-client-id', len: number, out: Buffer): JudgeKind {
    this.localReason = reason
    this.answerLength = len
    this.rcode = len >= 4 ? out[3]! & 0x0f : 0
    return JUDGE_LOCAL
  }
}
