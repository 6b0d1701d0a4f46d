/**
 * The contract between the CLI and a role: `filterd <role>` loads the config, opens the role's
 * log, writes its pid file, then calls the role module's `startRole`. The role binds its
 * listeners and resolves with what it serves; `close()` stops it (SIGTERM/SIGINT). On SIGHUP the
 * CLI reads the config again and hands the role the keys it applies live (`reload`).
 */
import type { Config } from './config/types.js'
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
