/**
 * The contract between the CLI and a role: `filterd <role>` loads the config, opens the role's
 * log, writes its pid file, then calls the role module's `startRole`. The role binds its
 * listeners and resolves with what it serves; `close()` stops it (SIGTERM/SIGINT).
 */
import type { Config } from './config/types.js'
import type { Logger } from './log/index.js'

export interface RoleContext {
  readonly config: Readonly<Config>
  readonly logger: Logger
}

export interface RunningRole {
  /** Human-readable lines: what is listening where (`dns udp+tcp 127.0.0.1:5300`). */
  readonly endpoints: readonly string[]
  close (): Promise<void>
}

export type StartRole = (ctx: RoleContext) => Promise<RunningRole>
