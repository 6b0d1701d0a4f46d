/**
 * The TLS certificate of the encrypted DNS listeners (`proxy.tls-cert`, `proxy.tls-key`): PEM files
 * read at start, and read again without a restart when either file changes (polled, so an editor's
 * or certbot's rename-over is seen as well as a write in place) or when `reload()` is called (SIGHUP).
 *
 * A pair that does not load (unreadable, not PEM, a key that does not match the certificate) at
 * start stops the start with a message naming the key; on a reload it is refused: the listeners
 * keep serving the previous certificate and one warning says why. Listeners read `current` at each
 * handshake, so a new certificate is served from the next handshake on, and connections already
 * open keep theirs.
 */
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs'
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls'
import { EngineError } from '../errors.js'
import type { Logger } from '../log/index.js'
import { certificateNotAfter } from './expiry.js'

/** How often the files' modification times are checked (ms). */
const POLL_MS = 1000

/** The TLS versions every listener allows (RFC 7858 and RFC 8484 need TLS 1.2 at least). */
export const TLS_MIN_VERSION = 'TLSv1.2'

export interface CertificateFiles {
  /** `proxy.tls-cert`: the certificate chain, PEM. */
  readonly cert: string
  /** `proxy.tls-key`: its private key, PEM. */
  readonly key: string
}

/** The PEM pair as loaded, and the context built from it. */
export interface LoadedCertificate {
  readonly options: SecureContextOptions
  readonly context: SecureContext
  /** When the leaf certificate expires (seconds since the epoch). */
  readonly notAfter: number
}

/** Loads and checks the pair; throws an Error saying what is wrong. */
export function loadCertificate(files: CertificateFiles): LoadedCertificate {
  const cert = readFileSync(files.cert)
  const key = readFileSync(files.key)
  // createSecureContext throws on a bad PEM and on a key that does not match the certificate.
  const options: SecureContextOptions = { cert, key, minVersion: TLS_MIN_VERSION }
  return { options, context: createSecureContext(options), notAfter: certificateNotAfter(cert) }
}

/** The pair at `files`; a pair that does not load is a config error naming `proxy.tls-cert`. */
function loadPair(files: CertificateFiles): LoadedCertificate {
  try {
    return loadCertificate(files)
  } catch (err) {
    throw new EngineError(
      'ENGINE_CONFIG_INVALID',
      `proxy.tls-cert / proxy.tls-key (${files.cert}, ${files.key}): ${(err as Error).message}`,
      { cause: err }
    )
  }
}

export class CertificateSource {
  private loaded: LoadedCertificate
  private files: CertificateFiles
  private readonly logger: Logger
  private readonly listeners: Array<(c: LoadedCertificate) => void> = []
  private readonly onFileChange = (cur: Stats, prev: Stats): void => {
    if (cur.mtimeMs !== prev.mtimeMs || cur.size !== prev.size || cur.ino !== prev.ino) this.reload('file changed')
  }
  private watching = false
  /** Reloads refused so far (for the log and the tests). */
  failures = 0

  /** Loads the pair now; a bad pair is a config error naming `proxy.tls-cert`. */
  constructor(files: CertificateFiles, logger: Logger) {
    this.files = files
    this.logger = logger
    this.loaded = loadPair(files)
  }

  /**
   * Serves the pair at `files` from the next handshake on (`proxy.tls-cert` or `tls-key` changed by a
   * reload) and follows those files instead. A pair that does not load is refused: throws, naming the
   * keys, and the current pair stays.
   */
  retarget(files: CertificateFiles): void {
    const next = loadPair(files)
    const watching = this.watching
    this.close()
    this.files = files
    this.loaded = next
    if (watching) this.watch()
    for (const fn of this.listeners) fn(next)
    this.logger.info({ cert: files.cert }, 'dns: TLS certificate loaded from the new proxy.tls-cert / proxy.tls-key')
  }

  get current(): LoadedCertificate {
    return this.loaded
  }

  /** Called with each newly loaded pair (a listener's setSecureContext). */
  onChange(fn: (c: LoadedCertificate) => void): void {
    this.listeners.push(fn)
  }

  /** Starts following the files (a timer per file, unref'd). */
  watch(): void {
    if (this.watching) return
    this.watching = true
    for (const f of [this.files.cert, this.files.key])
      watchFile(f, { interval: POLL_MS, persistent: false }, this.onFileChange)
  }

  /** Reads the pair again; a bad pair keeps the old one (returns false and logs why). */
  reload(why: string): boolean {
    let next: LoadedCertificate
    try {
      next = loadCertificate(this.files)
    } catch (err) {
      this.failures++
      this.logger.warn(
        { cert: this.files.cert, key: this.files.key, reason: (err as Error).message },
        `dns: TLS certificate not reloaded (${why}); still serving the previous one`
      )
      return false
    }
    this.loaded = next
    for (const fn of this.listeners) fn(next)
    this.logger.info({ cert: this.files.cert }, `dns: TLS certificate reloaded (${why})`)
    return true
  }

  close(): void {
    if (!this.watching) return
    this.watching = false
    for (const f of [this.files.cert, this.files.key]) unwatchFile(f, this.onFileChange)
  }
}
