/**
 * Billing contact with the statistics server (the collector): every `report-interval` seconds the
 * counters and the key are POSTed as JSON to `<collector-url>/report`. A 200 resets the counters
 * by what was sent and marks billing as healthy; anything else (no connection, a timeout, any
 * other status) marks it failed, and the service answers domain lookups with 503 until a contact
 * succeeds.
 *
 * Timing (docs/local.md, "Reporting"):
 * - the first contact is made at start, before the service listens;
 * - each contact times out after min(10 s, interval / 2);
 * - after a success the next one is due one interval later;
 * - after the n-th failure in a row it is retried after min(interval, base · 2^(n-1)) with
 *   base = min(5 s, interval / 4), ±10 % jitter so that many services do not retry in step:
 *   with the default 300 s, 5 s, 10 s, 20 s, … 160 s, then every 300 s.
 * Only one contact is in flight at a time; `reportNow()` (SIGUSR2) brings the next one forward.
 */
import type { Logger } from '../engine/log/index.js'
import type { LookupCounters } from './counters.js'

export interface ReporterOptions {
  collectorUrl: string
  key: string
  intervalSeconds: number
  counters: LookupCounters
  logger: Logger
  /** Extra fields sent with each report (the database version). */
  extra?: () => Record<string, unknown>
}

export class Reporter {
  /** False until a contact succeeds, and after every failed one. Read on every lookup. */
  isBillingOk = false
  readonly #opts: ReporterOptions
  readonly #url: string
  readonly #intervalMs: number
  readonly #timeoutMs: number
  #failures = 0
  #timer: NodeJS.Timeout | null = null
  #inFlight: Promise<boolean> | null = null
  #closed = false
  readonly #abort = new AbortController()

  constructor(opts: ReporterOptions) {
    this.#opts = opts
    this.#url = new URL('report', opts.collectorUrl.endsWith('/') ? opts.collectorUrl : opts.collectorUrl + '/').href
    this.#intervalMs = opts.intervalSeconds * 1000
    this.#timeoutMs = Math.min(10_000, this.#intervalMs / 2)
  }

  /** Delay before the next contact, given the failures in a row so far. */
  static delayAfter(failures: number, intervalMs: number, random = Math.random()): number {
    if (failures === 0) return intervalMs
    const base = Math.min(5000, intervalMs / 4)
    const delay = Math.min(intervalMs, base * 2 ** Math.min(failures - 1, 30))
    return Math.round(delay * (0.9 + 0.2 * random))
  }

  /** Makes the first contact and schedules the following ones. */
  async start(): Promise<void> {
    await this.reportNow()
  }

  /** Sends a report now (or joins the one in flight); resolves with whether it succeeded. */
  reportNow(): Promise<boolean> {
    if (this.#inFlight !== null) return this.#inFlight
    if (this.#timer !== null) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    this.#inFlight = this.#contact().finally(() => {
      this.#inFlight = null
      this.#schedule()
    })
    return this.#inFlight
  }

  #schedule(): void {
    if (this.#closed) return
    this.#timer = setTimeout(
      () => {
        void this.reportNow()
      },
      Reporter.delayAfter(this.#failures, this.#intervalMs)
    )
  }

  async #contact(): Promise<boolean> {
    const sent = this.#opts.counters.snapshot()
    const body = JSON.stringify({
      key: this.#opts.key,
      ...sent,
      ...this.#opts.extra?.(),
      sent: new Date().toISOString()
    })
    let status = 0
    let reason = ''
    try {
      const res = await fetch(this.#url, {
        method: 'POST',
        // One connection per contact, none kept idle between them (api/usage-report.ts says why).
        headers: { 'content-type': 'application/json', connection: 'close' },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), this.#abort.signal])
      })
      status = res.status
      await res.arrayBuffer()
    } catch (err) {
      const cause: unknown = (err as Error).cause
      reason =
        (err as Error).name === 'TimeoutError'
          ? `timed out after ${this.#timeoutMs} ms`
          : cause instanceof Error
            ? String(cause)
            : (err as Error).message
    }
    if (status === 200) {
      this.#opts.counters.subtract(sent)
      if (!this.isBillingOk)
        this.#opts.logger.info(
          { url: this.#url, afterFailures: this.#failures },
          'statistics server contact succeeded; billing ok'
        )
      this.#failures = 0
      this.isBillingOk = true
      return true
    }
    this.#failures++
    if (this.isBillingOk || this.#failures === 1) {
      this.#opts.logger.error(
        { url: this.#url, status, reason },
        'statistics server contact failed; lookups answer 503 until it succeeds'
      )
    } else {
      this.#opts.logger.warn(
        { url: this.#url, status, reason, failures: this.#failures },
        'statistics server contact failed again'
      )
    }
    this.isBillingOk = false
    return false
  }

  /** Stops scheduling; an in-flight contact is abandoned. */
  close(): void {
    this.#closed = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#abort.abort()
  }
}
