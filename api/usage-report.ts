/**
 * The usage report to the vendor (spec, Events: outbound statistics submission). Every
 * `stats.vendor-interval` seconds, when `stats.vendor-url` is set, the api role POSTs
 * `application/x-www-form-urlencoded` `key=<digest>&count=<user IP entries>`; the answer body `ok`
 * (surrounding white space ignored) is success.
 *
 * `key` is the lower-case hex SHA-256 of the DER SubjectPublicKeyInfo of the public key in
 * `stats.vendor-key` (a PEM public key, private key or X.509 certificate: the public key is what is
 * hashed). The same value is printed by
 *   openssl pkey -pubin -in vendor.pub -outform DER | sha256sum
 * (for a private key drop `-pubin`; for a certificate: `openssl x509 -in c.pem -pubkey -noout | openssl pkey -pubin -outform DER | sha256sum`).
 *
 * A failed report (network error, timeout, non-2xx status, a body other than `ok`) is logged and
 * retried after 30 s, doubling up to the interval; nothing else waits for it.
 *
 * Several hosts on one Redis (`common.redis-ip`) send one report per interval between them, not one
 * each: before sending, a host takes the shared claim (`options.claim`, engine/replica/claim.ts) for
 * the interval less a margin (a tenth, at most 5 s, so the sender's own next turn finds it lapsed).
 * A host that finds it taken skips its turn: another host reported. A sender whose report fails
 * gives the claim back, so the next try of any host (its own retry in 30 s, or another host's turn)
 * sends; a sender that dies holding it delays the next report by at most one interval. Redis not
 * answering counts as a failed report (retried), so a Redis outage never makes every host send.
 */
import { createHash, createPublicKey, X509Certificate } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { Config } from '../engine/config/index.js'
import type { Logger } from '../engine/log/index.js'
import type { Store } from '../engine/store/index.js'

export interface UsageReporter {
  /** Sends one report now; resolves true on `ok`. Never rejects. */
  reportNow(): Promise<boolean>
  close(): void
}

export interface UsageReporterOptions {
  fetch?: typeof fetch
  /** First retry delay; default 30 s. */
  retryMs?: number
  /** Request timeout; default 15 s. */
  timeoutMs?: number
  /** Delay of the first report after start; default 60 s (the store is open, the role settled). */
  firstDelayMs?: number
  /** The claim hosts sharing one Redis take before sending, so one of them reports per interval. */
  claim?: UsageClaim
}

/** engine/replica/claim.ts's PeriodClaim, as the reporter uses it. */
export interface UsageClaim {
  take(ms: number): Promise<boolean>
  release(): Promise<void>
}

/** How long a sender holds the claim: the interval less a tenth (at most 5 s). */
export function usageClaimMs(intervalMs: number): number {
  return intervalMs - Math.min(5000, intervalMs / 10)
}

/** The `key` field: hex SHA-256 of the DER SubjectPublicKeyInfo of the key (or certificate) in `pem`. */
export function vendorKeyDigest(pem: string | Buffer): string {
  const text = pem.toString()
  const key = text.includes('BEGIN CERTIFICATE') ? new X509Certificate(text).publicKey : createPublicKey(text)
  return createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex')
}

/** POSTs one usage report (a form) to the vendor; throws unless it answers 2xx with the body `ok`. */
async function postUsage(
  doFetch: typeof fetch,
  url: string,
  form: Record<string, string>,
  timeoutMs: number
): Promise<void> {
  const res = await doFetch(url, {
    method: 'POST',
    // One connection per report (minutes apart): no idle keep-alive socket is left behind. Node 20's fetch
    // (undici 6) arms an idle timer on a kept socket that can fire on a collected parser and throw outside
    // any promise ("Cannot destructure property 'socket' of 'parser.deref(...)'"), which stops the process.
    headers: { 'content-type': 'application/x-www-form-urlencoded', connection: 'close' },
    body: new URLSearchParams(form).toString(),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const body = (await res.text()).trim()
  if (!res.ok || body !== 'ok') throw new Error(`vendor answered ${res.status}: ${body.slice(0, 200)}`)
}

/**
 * Starts the usage reporter; a no-op when `stats.vendor-url` is not set.
 *
 * @example
 * ```ts
 * const usage = startUsageReporter(config, store, logger)
 * // on shutdown: usage.close()
 * ```
 */
export function startUsageReporter(
  config: Readonly<Config>,
  store: Pick<Store, 'addressCount'>,
  logger: Logger,
  options: UsageReporterOptions = {}
): UsageReporter {
  const url = config.stats['vendor-url']
  if (url === undefined || url === '') return { reportNow: async () => false, close() {} }
  const keyFile = config.stats['vendor-key']
  const doFetch = options.fetch ?? fetch
  const intervalMs = config.stats['vendor-interval'] * 1000
  const firstRetry = Math.min(options.retryMs ?? 30_000, intervalMs)
  const timeoutMs = options.timeoutMs ?? 15_000
  let key: string | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  let retry = firstRetry
  let running: Promise<boolean> | undefined

  const claim = options.claim
  const once = async (): Promise<boolean> => {
    let claimed = false
    try {
      if (keyFile === undefined) throw new Error('stats.vendor-key is not set')
      key ??= vendorKeyDigest(await readFile(keyFile))
      if (claim !== undefined) {
        if (!(await claim.take(usageClaimMs(intervalMs)))) {
          logger.info('usage report: another host sends it this interval')
          return true
        }
        claimed = true
      }
      const count = store.addressCount()
      await postUsage(doFetch, url, { key, count: String(count) }, timeoutMs)
      logger.info({ count }, 'usage report sent')
      return true
    } catch (err) {
      logger.warn({ err, retryInMs: retry }, 'usage report failed')
      if (claimed) await claim!.release().catch(() => {})
      return false
    }
  }

  const reportNow = (): Promise<boolean> => {
    running ??= once().finally(() => {
      running = undefined
    })
    return running
  }

  const schedule = (ms: number): void => {
    if (closed) return
    timer = setTimeout(() => {
      reportNow().then(
        (ok) => {
          if (ok) retry = firstRetry
          const next = ok ? intervalMs : retry
          if (!ok) retry = Math.min(retry * 2, intervalMs)
          schedule(next)
        },
        () => {}
      )
    }, ms)
    timer.unref()
  }
  schedule(Math.min(options.firstDelayMs ?? 60_000, intervalMs))

  return {
    reportNow,
    close() {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
    }
  }
}
