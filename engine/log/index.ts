/**
 * Structured logs: one JSON object per line (pino), to the file a role's `log` key names or to
 * standard output for `-`. Disabled levels are no-ops, so a debug line on a hot path costs a
 * property check when debug is off.
 *
 * `time` is an ISO 8601 UTC string (`2026-11-24T01:30:13.123Z`), readable by a person and by every
 * log collector without knowing it is epoch milliseconds.
 *
 * A log file is reopened on SIGHUP, so logrotate can rename it and signal the daemon (its
 * `postrotate` step) instead of using `copytruncate`, which loses the lines written in between.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { pino, type Logger } from 'pino'
import type { LogLevel } from '../config/index.js'

export type { Logger } from 'pino'

export interface LoggerOptions {
  /** Absolute file path, or '-' for standard output. */
  destination: string
  level: LogLevel
  /** Role name put on every line. */
  role: string
}

export function createLogger(options: LoggerOptions): Logger {
  const toFile = options.destination !== '-'
  if (toFile) mkdirSync(dirname(options.destination), { recursive: true })
  // Synchronous writes, to standard output and to files alike. An asynchronous file destination
  // opens its file after a turn of the event loop, and a process that logs and exits before then
  // (a front process whose start failed) died in pino's exit hook with a "sonic boom is not ready
  // yet" stack instead of its line. These logs are a few lines per event, never per query, and an
  // audit line is on disk when its request is answered.
  const dest = pino.destination({ dest: toFile ? options.destination : 1, sync: true, mkdir: true })
  if (toFile) {
    // The file is reopened at its configured path; one listener per file, never removed, as the
    // destination lives as long as the process.
    process.on('SIGHUP', () => {
      dest.reopen()
    })
  }
  return pino(
    { level: options.level, base: { role: options.role, pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    dest
  )
}

/**
 * Writes a role's start failure (bad config, unset environment variable, unreadable file, a port
 * in use, …) as one `fatal` line on standard error, in the shape of the role's own lines (`level`
 * 60, `time`, `role`, `pid`, `err`, `msg`), so that a log collector reading a container's output
 * sees JSON only. `msg` keeps the line a person used to read (`filterd: …`).
 *
 * Standard error rather than the role's `log`: the failure may come before the config names a log
 * (a config that does not load), and whoever starts a daemon (a shell, systemd, docker) shows
 * standard error. Synchronous, because the process exits right after.
 */
export function logStartFailure(role: string, err: unknown, msg: string): void {
  pino(
    { base: { role, pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 2, sync: true })
  ).fatal({ err }, msg)
}

/**
 * The logger of a role's audit lines (who changed what through the management API): a child of the role's
 * logger that writes at level 30 (info) whatever the role's `log-level` says, because an audit record is not
 * a diagnostic a level filter may drop (`log-level: warn` keeps them). Only `silent`, which asks for no log
 * at all, writes none.
 */
export function auditLogger(logger: Logger): Logger {
  return logger.level === 'silent' ? logger : logger.child({}, { level: 'info' })
}

/** A logger that writes nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
