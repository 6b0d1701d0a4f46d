/**
 * One `/health` for every role (the sync role's shape: `ok`, `state`, what is degraded and why),
 * served on each role's HTTP listener and read by `filterd status`. A role describes itself with
 * `healthReport`: its problems make it `degraded`; `ok` is true only when none of them is a failure
 * (a problem without `warning`). The route answers 200 when ok and 503 otherwise, which is what a
 * load balancer's check wants: a role that still serves everyone (one resolver of three down, a
 * certificate expiring in ten days) says so with a warning and keeps its 200.
 */
import type { Handler, HttpServer } from '../http/index.js'
import { isLoopback } from '../metrics/index.js'

/** One thing that is wrong, in words an operator acts on. */
export interface HealthProblem {
  /** What is degraded: `store`, `redis`, `resolver 10.0.0.1:53`, `stats-import`, … */
  readonly what: string
  readonly why: string
  /** The role still serves (200, state `degraded`); without it the problem makes the role unhealthy (503). */
  readonly warning?: true
}

export interface HealthReport {
  readonly ok: boolean
  readonly role: string
  /** `ok` or `degraded`, or a role's own word for it (the sync role's replica state: `following`, …). */
  readonly state: string
  readonly degraded: readonly HealthProblem[]
  readonly pid: number
  /** When this process started (ISO 8601 UTC). */
  readonly since: string
  /** What the role listens on (its start line's endpoints). */
  readonly listeners: readonly string[]
  /** The policy generation of the store this role reads, when it reads one. */
  readonly generation?: number
  readonly [extra: string]: unknown
}

const startedAt = new Date(Date.now() - Math.round(process.uptime() * 1000)).toISOString()

export interface HealthInput {
  role: string
  listeners: readonly string[]
  problems?: readonly HealthProblem[]
  /** Overrides the state word (default: `ok` without problems, else `degraded`). */
  state?: string
  generation?: number
  /** Role-specific fields (the replica's lag, the last statistics import, …). */
  extra?: Record<string, unknown>
}

export function healthReport(input: HealthInput): HealthReport {
  const degraded = input.problems ?? []
  return {
    ...input.extra,
    ok: degraded.every((p) => p.warning === true),
    role: input.role,
    state: input.state ?? (degraded.length === 0 ? 'ok' : 'degraded'),
    degraded,
    pid: process.pid,
    since: startedAt,
    listeners: input.listeners,
    ...(input.generation === undefined ? {} : { generation: input.generation })
  }
}

/** The store's generation, or a problem when the store cannot be read. */
export function storeGeneration(read: () => number, problems: HealthProblem[]): number | undefined {
  try {
    return read()
  } catch (err) {
    problems.push({ what: 'store', why: `cannot read the store: ${(err as Error).message}` })
    return undefined
  }
}

export interface HealthRouteOptions {
  /**
   * Answer only callers on this host (a public listener: the categorization API, the local service):
   * others get `fallback` (the role's own handler, for which /health is a name like any other) or 404.
   */
  loopbackOnly?: boolean
  fallback?: Handler
}

/** GET /health on `http`: the report, 200 when ok, 503 when degraded. */
export function registerHealthRoute(
  http: HttpServer,
  report: () => HealthReport | Promise<HealthReport>,
  options: HealthRouteOptions = {}
): void {
  http.route('GET', '/health', async (req, res) => {
    if (options.loopbackOnly === true && !isLoopback(req.remoteAddress)) {
      if (options.fallback !== undefined) return await options.fallback(req, res)
      res.json({ error: { code: 'HTTP_NOT_FOUND', message: 'not found' } }, 404)
      return
    }
    const r = await report()
    res.json(r, r.ok ? 200 : 503)
  })
}
