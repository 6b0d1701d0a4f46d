/**
 * The audit line of every management API write (docs/api.md, "Audit log"): `{"audit":"api", who, source,
 * method, path, status}` plus the line's `time`, written once the write is answered, refused ones included,
 * whatever api.log-level says (engine/log, auditLogger). `who` is the client id, `loopback`,
 * `address-rule`, or `-` when it was refused.
 */
import { isHttpError, type Handler, type HttpRequest, type HttpResponse } from '../engine/http/index.js'
import { auditLogger, type Logger } from '../engine/log/index.js'

export const WRITE_METHODS: ReadonlySet<string> = new Set(['PUT', 'POST', 'DELETE', 'PATCH'])

/** What an audit line names: the request, read before the handler runs (uWS: the request dies with its callback). */
export interface Write {
  readonly method: string
  readonly path: string
  readonly source: string
}

/** The write `req` is, or undefined for a read. */
export function writeOf(req: HttpRequest, source: string): Write | undefined {
  if (!WRITE_METHODS.has(req.method)) return undefined
  return { method: req.method, path: req.query === '' ? req.path : `${req.path}?${req.query}`, source }
}

export class AuditLog {
  readonly #log: Logger

  constructor(logger: Logger) {
    this.#log = auditLogger(logger)
  }

  line(w: Write, who: string, status: number): void {
    this.#log.info(
      { audit: 'api', who, source: w.source, method: w.method, path: w.path, status },
      'management API write'
    )
  }

  /** Runs the handler; for a write, logs the audit line once the answer (or the error that becomes it) is known. */
  run(handler: Handler, req: HttpRequest, res: HttpResponse, who: string, w: Write | undefined): void | Promise<void> {
    if (w === undefined) return handler(req, res)
    const done = (): void => {
      this.line(w, who, res.sent ? res.statusCode : 500)
    }
    const failed = (err: unknown): never => {
      this.line(w, who, isHttpError(err) ? err.status : 500)
      throw err
    }
    let result: void | Promise<void>
    try {
      result = handler(req, res)
    } catch (err) {
      return failed(err)
    }
    if (result instanceof Promise) return result.then(done, failed)
    done()
  }
}
