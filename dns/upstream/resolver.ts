/*
 * Resolver health: one operator resolver (`dnscache.forward` entry), whether the forwarder counts
 * it up, why it changed, and its counters (dns/metrics.ts `ResolverCounters`).
 *
 * A try that times out, an ICMP port unreachable and a refused or reset TCP connection mark a
 * resolver down at once: nothing answers there. An error answer (REFUSED, SERVFAIL, NOTIMP) marks
 * it down after ERRORS_TO_DOWN of them in a row: one SERVFAIL is often one broken zone (a DNSSEC
 * failure, a lame delegation), not a broken resolver, while a resolver that refuses everything (an
 * ACL that lost us, a resolver in a bad state) says so on every query. Either way the query itself
 * already failed over to the next resolver. A down resolver comes back with a good answer (a
 * probe's or a user's): any RCODE but those three.
 */
import type { Logger } from '../../engine/log/index.js'
import type { ResolverSnapshot } from '../../engine/metrics/index.js'
import { ResolverCounters } from '../metrics.js'
import { formatHostPort } from '../../engine/config/index.js'
import type { OutSocket } from './socket-pool.js'

export interface ResolverAddress {
  readonly host: string
  readonly port: number
  readonly family: 4 | 6
}

/** Error answers in a row that mark a resolver down. */
const ERRORS_TO_DOWN = 3

export type HealthLogger = Pick<Logger, 'warn' | 'info'>

export class Resolver {
  readonly host: string
  readonly port: number
  readonly family: 4 | 6
  /** `host:port` (`[v6]:port`): the log's and the metrics' name for it. */
  readonly label: string
  /** False from a failed try (see the top of this file) until a good answer. */
  up = true
  /** Why it went down ('' while up): what /health names. */
  downWhy = ''
  /** Error answers in a row (reset by a good one). */
  errorsInRow = 0
  /** A background probe is waiting for its answer. */
  probing = false
  /** Why its sockets could not be opened ('' when they could): no route to it, say. */
  unreachable = ''
  /** Its sockets are being opened again in the background. */
  opening = false
  /** Taken out of the list by `Forwarder.reconfigure`: its sockets close once their tries are done. */
  removed = false
  /** UDP sockets connected to this resolver: the live pool, and retired ones still awaited. */
  readonly pool: OutSocket[] = []
  readonly retired = new Set<OutSocket>()
  readonly counters = new ResolverCounters()
  private readonly logger: HealthLogger | null

  constructor(a: ResolverAddress, logger: HealthLogger | null) {
    this.host = a.host
    this.port = a.port
    this.family = a.family
    this.label = formatHostPort({ host: a.host, port: a.port })
    this.logger = logger
  }

  /** Same address (the identity `reconfigure` keeps a resolver's state by). */
  is(a: ResolverAddress): boolean {
    return a.host === this.host && a.port === this.port && a.family === this.family
  }

  /** Marks it down (one log line when it was up, unless the caller logs the change itself: `quiet`). */
  down(why: string, quiet = false): void {
    if (!this.up) return
    this.up = false
    this.downWhy = why
    if (!quiet)
      this.logger?.warn({ resolver: this.label, state: 'down', why }, `dns: resolver ${this.label} is down: ${why}`)
  }

  /** A good answer: marks it up (one log line when it was down). */
  answered(why: string): void {
    this.errorsInRow = 0
    if (this.up) return
    this.up = true
    this.downWhy = ''
    this.logger?.info({ resolver: this.label, state: 'up', why }, `dns: resolver ${this.label} is up: ${why}`)
  }

  /** An error answer (`rcode` named): down after ERRORS_TO_DOWN in a row. */
  errorAnswer(rcode: string): void {
    if (++this.errorsInRow >= ERRORS_TO_DOWN) this.down(`answered ${rcode} ${this.errorsInRow} times in a row`)
  }

  snapshot(): ResolverSnapshot {
    return this.counters.snapshot(this.label, this.up, this.downWhy)
  }
}
