/**
 * The contract between the CLI and a role: `filterd <role>` loads the config, opens the role's
 * log, writes its pid file, then calls the role module's `startRole`. The role binds its
 * listeners and resolves with what it serves; `close()` stops it (SIGTERM/SIGINT). On SIGHUP the
 * CLI reads the config again and hands the role the keys it applies live (`reload`).
 */
import type { Config } from './config/index.js'
import type { Logger } from './log/index.js'
import type { HealthReport } from './health/index.js'

export interface RoleContext {
  readonly config: Readonly<Config>
  readonly logger: Logger
}

export interface RunningRole {
  /** Human-readable lines: what is listening where (`dns udp+tcp 127.0.0.1:5300`). */
  readonly endpoints: readonly string[]
  close(): Promise<void>
  /**
   * Applies `keys` (changed keys this role reads and the schema marks `x-live` for it) from
   * `config`, the running config with those keys replaced. The CLI sets its logger's level itself;
   * a role applies the keys it knows and ignores the others. Throws when a key cannot be applied.
   */
  reload?(config: Readonly<Config>, keys: readonly string[]): Promise<void>
  /** What this role's `/health` says (engine/health): also read by `filterd status`. */
  health?(): HealthReport | Promise<HealthReport>
}

export type StartRole = (ctx: RoleContext) => Promise<RunningRole>

/**
 * What a role opened, as a stack of undo steps. Each step of a start that opens something (a store,
 * a listener, a timer, a signal handler) pushes the step that undoes it, so a start that fails
 * halfway undoes exactly what it had opened, and `close()` undoes all of it, last opened first:
 * the listeners before the stores they read.
 */
export class RoleStack {
  /** The role's endpoint lines (`RunningRole.endpoints`), pushed as its listeners bind. */
  readonly endpoints: string[] = []
  readonly #undo: Array<() => unknown> = []

  /** Pushes `step`, which undoes what the role just opened. */
  defer(step: () => unknown): void {
    this.#undo.push(step)
  }

  /** Pushes `thing.close()` and hands `thing` back: `const store = stack.own(Store.open(dir))`. */
  own<T extends { close(): unknown }>(thing: T): T {
    this.defer(() => thing.close())
    return thing
  }

  /**
   * Runs every step, last pushed first, each awaited. A step that fails does not keep the others from
   * running (a store left open would hold its lock); the first failure is thrown once all have run.
   */
  async close(): Promise<void> {
    let failure: { err: unknown } | undefined
    for (let step = this.#undo.pop(); step !== undefined; step = this.#undo.pop()) {
      try {
        await step()
      } catch (err) {
        failure ??= { err }
      }
    }
    if (failure !== undefined) throw failure.err
  }
}

/**
 * A role's start over one `RoleStack`: `open` opens and binds what the role serves, pushing an undo
 * step for each, and returns the rest of the running role (health, reload). When `open` throws, what
 * it opened is undone before the error goes on; the running role's endpoints and `close()` are the
 * stack's.
 *
 * @example
 * ```ts
 * export const startRole: StartRole = (ctx) =>
 *   startWithStack(async (stack) => {
 *     const store = stack.own(Store.open(ctx.config.common.db))
 *     const port = await listen(stack.own(createServer(store)))
 *     stack.endpoints.push(`mine http 127.0.0.1:${port}`)
 *     return {}
 *   })
 * ```
 */
export async function startWithStack(
  open: (stack: RoleStack) => Promise<Omit<RunningRole, 'endpoints' | 'close'>>
): Promise<RunningRole> {
  const stack = new RoleStack()
  try {
    const rest = await open(stack)
    return { ...rest, endpoints: stack.endpoints, close: () => stack.close() }
  } catch (err) {
    await stack.close().catch(() => {})
    throw err
  }
}
